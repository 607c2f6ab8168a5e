"""A fake GitHub REST API for tests: a real aiohttp server on a loopback port.

Typical use (``tests/conftest.py`` does ``from tests.fakegithub import fake_github``)::

    async def test_something(fake_github: FakeGitHub) -> None:
        repo = fake_github.add_repo("octo-org", "octo-repo")
        repo.put_files("main", {".github/workflows/ci.yml": "on: push\\n"})
        fake_github.add_installation(1, [repo])
        # the code under test talks to fake_github.base_url (also in $GITHUB_API_URL)
        assert fake_github.writes() == []
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from .auth import RsaKeyPair, make_rsa_key
from .gitstore import Signature, blob_sha
from .server import FakeGitHub
from .state import (
    Comment,
    Dispatch,
    Installation,
    Issue,
    LoggedRequest,
    Pull,
    RecordedRequest,
    Repo,
    Workflow,
)

__all__ = [
    "Comment",
    "Dispatch",
    "FakeGitHub",
    "Installation",
    "Issue",
    "LoggedRequest",
    "Pull",
    "RecordedRequest",
    "Repo",
    "RsaKeyPair",
    "Signature",
    "Workflow",
    "blob_sha",
    "fake_github",
    "make_rsa_key",
]


@pytest_asyncio.fixture
async def fake_github(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeGitHub]:
    """A started :class:`FakeGitHub`; ``GITHUB_API_URL`` points at it for the test."""
    async with FakeGitHub() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        yield fake
