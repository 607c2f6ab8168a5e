"""Print requirements.lock: `pip freeze` of this environment cut to foldbot's runtime
dependency closure (pyproject's `dependencies`, with the extras they ask for, and all that
those need), so no test-only package and not foldbot itself. `make lock` writes it; the
Dockerfile installs from it."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def runtime_closure(project: str = "foldbot") -> set[str]:
    """The canonical names of every distribution `project` needs at run time, as installed here."""
    needed: dict[str, set[str]] = {}
    todo = [(Requirement(r), "") for r in metadata.requires(project) or []]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        if name in needed and set(req.extras) <= needed[name]:
            continue
        needed.setdefault(name, set()).update(req.extras)
        for wanted in ("", *req.extras):
            todo += [(Requirement(r), wanted) for r in metadata.requires(req.name) or []]
    return set(needed)


def main() -> None:
    keep = runtime_closure()
    frozen = subprocess.run([sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
    pins: dict[str, str] = {}
    for line in frozen.splitlines():
        name, pinned, _ = line.partition("==")
        if pinned and canonicalize_name(name) in keep:
            pins[canonicalize_name(name)] = line
    print("# foldbot's runtime dependencies, pinned as tested: written by `make lock` (scripts/lock.py).")
    print("\n".join(pins[name] for name in sorted(pins)))


if __name__ == "__main__":
    main()
