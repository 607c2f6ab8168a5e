"""Access to the shared GitHub fixture files, used as templates for responses.

The fixtures live outside the repository, in ``<repo>/../shared/fixtures/github``
(see that folder's README). They are read in place and never copied.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_DIR = REPO_ROOT.parent / "shared" / "fixtures" / "github"
REST_DIR = FIXTURES_DIR / "rest"
EXAMPLES_DIR = REST_DIR / "examples"
OPENAPI_PATH = REST_DIR / "openapi-subset.api.github.com.json"
REAL_HEADERS_DIR = REST_DIR / "real-headers"

# The example files are written against api.github.com and github.com.
EXAMPLE_API = "https://api.github.com"
EXAMPLE_HTML = "https://github.com"


@cache
def _load(path: Path) -> Any:
    if not path.is_file():
        raise FileNotFoundError(
            f"GitHub fixture {path} is missing; the fake expects the shared fixtures "
            f"at {FIXTURES_DIR} (<repo>/../shared/fixtures/github)"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def example(name: str) -> Any:
    """Return a fresh deep copy of ``rest/examples/<name>.json``."""
    return copy.deepcopy(_load(EXAMPLES_DIR / f"{name}.json"))


def openapi() -> Any:
    """Return the OpenAPI subset document (shared, do not mutate)."""
    return _load(OPENAPI_PATH)


def real_headers(name: str) -> dict[str, str]:
    """Return one recorded header set from ``rest/real-headers``."""
    return dict(_load(REAL_HEADERS_DIR / f"{name}.json"))


def static_response_headers() -> dict[str, str]:
    """Headers that every recorded github.com response carries with the same value."""
    recorded = [
        real_headers(name)
        for name in (
            "gidgethub-pr_single.200.headers",
            "gidgethub-pr_page_1.200.headers",
            "gidgethub-pr_not_found.404.headers",
        )
    ]
    per_request = {
        "date",
        "content-length",
        "content-type",
        "status",
        "etag",
        "last-modified",
        "link",
        "vary",
        "cache-control",
        "x-served-by",
        "x-github-request-id",
        "x-github-media-type",
    }
    first = recorded[0]
    return {
        key: value
        for key, value in first.items()
        if key not in per_request
        and not key.startswith("x-ratelimit-")
        and all(other.get(key) == value for other in recorded[1:])
    }


def rebase(value: Any, replacements: Sequence[tuple[str, str]]) -> Any:
    """Recursively rewrite string prefixes (e.g. example URLs to the fake's URLs).

    The first matching prefix wins, so list more specific prefixes first.
    """
    if isinstance(value, str):
        for old, new in replacements:
            if value.startswith(old):
                return new + value[len(old) :]
        return value
    if isinstance(value, Mapping):
        return {key: rebase(item, replacements) for key, item in value.items()}
    if isinstance(value, list):
        return [rebase(item, replacements) for item in value]
    return value


def project(template: Mapping[str, Any], full: Mapping[str, Any]) -> dict[str, Any]:
    """Keep only the keys of ``template`` (in its order), taking values from ``full``."""
    return {key: full[key] for key in template if key in full}
