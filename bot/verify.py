"""The checks of a patch that need other programs: `git apply`, the GitHub workflow
schema that check-jsonschema ships, and actionlint when it is installed.

`bot.edit.verify_edit` has already shown, in memory, that each patched file parses
to exactly the planned change. These checks show that the patch text itself is
what a maintainer can apply, and that GitHub will accept the result.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import jsonschema
from check_jsonschema.builtin_schemas import get_builtin_schema

from .edit import FileEdit
from .workflow import WorkflowError, compose_workflow, context_keys, tree_expressions

SCHEMA_NAME = "vendor.github-workflows"


class PatchCheckError(ValueError):
    """The patch failed a check; the message says which and how."""


@dataclass(frozen=True)
class CheckReport:
    git_apply: bool
    schema: bool
    actionlint: str  # "clean", "not installed"

    def summary(self) -> str:
        return (f"`git apply --check` passed; the patched files validate against check-jsonschema's "
                f"`{SCHEMA_NAME}` schema; actionlint: {self.actionlint}")


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    """The GitHub workflow schema that check-jsonschema ships (its public
    `get_builtin_schema`), compiled once."""
    schema = get_builtin_schema(SCHEMA_NAME)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@functools.lru_cache(maxsize=32)
def _data(path: str, text: str) -> dict[str, Any]:
    """A file's plain data, parsed once for the checks below (kept per text, as they are)."""
    return compose_workflow(text, path)[1]


@functools.lru_cache(maxsize=32)
def schema_errors(path: str, text: str) -> tuple[str, ...]:
    """What the GitHub workflow schema says about a file ('on' read as GitHub reads it).
    Kept per text: each event checks the same lane files, and mostly the same patch
    (~27 ms a file here, the most of an event's CPU before it was kept)."""
    data = _data(path, text)
    return tuple(sorted(
        f"{'/'.join(str(p) for p in error.absolute_path) or '/'}: {error.message[:200]}"
        for error in _validator().iter_errors(data)
    ))


def check_patch(patch: str, edits: list[FileEdit], files: Mapping[str, str]) -> CheckReport:
    """Apply the patch to a copy of the files and check the result; raise PatchCheckError."""
    if not patch:
        raise PatchCheckError("there is no patch to check")
    with tempfile.TemporaryDirectory(prefix="foldbot-check-") as tmp:
        root = Path(tmp)
        _write_tree(root, files)
        patch_file = root.parent / f"{root.name}.diff"
        patch_file.write_bytes(patch.encode("utf-8"))
        try:
            for args in (["--check"], []):
                result = subprocess.run(
                    ["git", "apply", *args, str(patch_file)], cwd=root, capture_output=True, text=True, timeout=60
                )
                if result.returncode != 0:
                    raise PatchCheckError(f"`git apply {' '.join(args)}` refused the patch: {result.stderr.strip()[:500]}")
        finally:
            patch_file.unlink(missing_ok=True)
        for edit in edits:
            applied = _read(root / edit.path)
            if applied != edit.after:
                raise PatchCheckError(f"{edit.path}: the applied patch does not give the verified text")
        for edit in edits:
            try:
                _data(edit.path, edit.after)
            except WorkflowError as exc:  # (verify_edit parsed it; a patch made another way may not parse)
                raise PatchCheckError(f"the patched file does not parse: {exc}") from None
            new = set(schema_errors(edit.path, edit.after)) - set(schema_errors(edit.path, edit.before))
            if new:
                raise PatchCheckError(f"{edit.path}: the patched file breaks the GitHub workflow schema: {sorted(new)[0]}")
            unmet = needs_unmet(edit.path, edit.after) - needs_unmet(edit.path, edit.before)
            if unmet:
                raise PatchCheckError(f"{edit.path}: the patched file {sorted(unmet)[0]}, which reads as empty")
        lint = _actionlint(root, edits)
    return CheckReport(git_apply=True, schema=True, actionlint=lint)


@functools.lru_cache(maxsize=32)
def needs_unmet(path: str, text: str) -> frozenset[str]:
    """Each `needs.<id>` a job reads that is not among its `needs:` (what actionlint calls
    "property is not defined in object type"; here without it): in words. GitHub gives such a
    job nothing there; a removed job left behind in an `if:` is one."""
    jobs = _data(path, text).get("jobs")
    found: set[str] = set()
    for job_id, raw in (jobs.items() if isinstance(jobs, dict) else ()):
        if not isinstance(raw, dict):
            continue
        needs = raw.get("needs")
        needed = {str(n).lower() for n in (needs if isinstance(needs, list) else [needs] if needs else [])}
        for name in context_keys(tree_expressions(raw), "needs"):
            if name and name not in needed:  # ("": the whole of it, `toJSON(needs)`)
                found.add(f"has job `{job_id}` read `needs.{name}`, a job it does not need")
    return frozenset(found)


def _write_tree(root: Path, files: Mapping[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))


def _actionlint(root: Path, edits: list[FileEdit]) -> str:
    binary = shutil.which("actionlint")
    if binary is None:
        return "not installed"
    for edit in edits:
        before_dir = root / "_before"
        _write_tree(before_dir, {edit.path: edit.before})
        before = _lint(binary, before_dir, edit.path)
        after = _lint(binary, root, edit.path)
        new = after - before
        if new:
            raise PatchCheckError(f"{edit.path}: actionlint reports new problems: {sorted(new)[0]}")
    return "nothing new"


def _lint(binary: str, cwd: Path, path: str) -> set[str]:
    """actionlint's messages without line numbers, so moved lines compare equal."""
    result = subprocess.run(
        [binary, "-format", "{{range $err := .}}{{$err.Kind}}: {{$err.Message}}\n{{end}}", path],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )
    if result.returncode not in (0, 1):
        raise PatchCheckError(f"actionlint failed to run: {result.stderr.strip()[:300]}")
    return {line for line in result.stdout.splitlines() if line.strip()}


def apply_patch(patch: str, files: Mapping[str, str]) -> dict[str, str]:
    """The files a patch changes, as `git apply` writes them; PatchCheckError when it does not apply."""
    with tempfile.TemporaryDirectory(prefix="foldbot-apply-") as tmp:
        root = Path(tmp) / "repo"
        _write_tree(root, files)
        patch_file = Path(tmp) / "change.diff"
        patch_file.write_bytes(patch.encode("utf-8"))
        result = subprocess.run(["git", "apply", str(patch_file)], cwd=root, capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise PatchCheckError(f"`git apply` refused the patch: {result.stderr.strip()[:500]}")
        applied = {path: _read(root / path) for path in files}
        return {path: text for path, text in applied.items() if text != files[path]}


def _read(path: Path) -> str:
    """A file's text as written: its line ends kept (`read_text` would turn CRLF into LF, and a
    lane file written on Windows would read as changed on every line)."""
    return path.read_bytes().decode("utf-8")
