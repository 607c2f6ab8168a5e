"""The container image: its lock pins every runtime dependency (and nothing only the tests
need), and the Dockerfile runs foldbot as a non-root user from that lock, with a health check.
Docker is not run here: these read the files."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from scripts.lock import runtime_closure
from tests.paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")


def pins() -> dict[str, str]:
    """requirements.lock as {canonical name: version}; every line is `name==version` or a comment."""
    pinned = {}
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==(\S+)", line)
        assert match, f"requirements.lock: {line!r} is not an exact pin"
        pinned[canonicalize_name(match[1])] = match[2]
    return pinned


def test_every_runtime_dependency_is_pinned_within_its_bounds() -> None:
    pinned = pins()
    for spec in PYPROJECT["project"]["dependencies"]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req.name} has no pin in requirements.lock (make lock)"
        assert req.specifier.contains(pinned[name]), f"{req.name}=={pinned[name]} is outside {spec}"


def test_the_lock_holds_no_test_only_package_and_not_foldbot() -> None:
    pinned = pins()
    runtime = runtime_closure()
    test_only = {canonicalize_name(Requirement(s).name) for s in PYPROJECT["project"]["optional-dependencies"]["test"]}
    assert not (test_only - runtime) & set(pinned)
    assert "foldbot" not in pinned


def test_the_dockerfile_runs_foldbot_unprivileged_from_the_lock_with_a_health_check() -> None:
    lines = [line.strip() for line in DOCKERFILE.splitlines()]
    assert "FROM python:3.11-slim" in lines
    assert any("apt-get install" in line and "git" in line for line in lines)
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert "COPY requirements.lock ./" in lines
    assert "RUN pip install --no-cache-dir -r requirements.lock" in lines
    assert "RUN pip install --no-cache-dir --no-deps . && pip check" in lines  # nothing besides the lock
    # the data directory (the journal) is a volume the user owns: a recreated container loses nothing accepted
    made = lines.index("RUN mkdir data")
    assert made > lines.index(f"USER {users[-1]}")
    assert [line for line in lines[:made] if line.startswith("WORKDIR ")][-1] == "WORKDIR /home/foldbot"
    assert 'VOLUME ["/home/foldbot/data"]' in lines[made:]
    health = DOCKERFILE[DOCKERFILE.index("HEALTHCHECK"):]
    assert "urllib.request.urlopen(" in health and "/health/live'" in health  # (not `/health`: see test_app_serve)
    assert lines[-1] == 'CMD ["python", "-m", "bot", "serve"]'
