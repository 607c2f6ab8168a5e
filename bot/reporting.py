"""The rules of reporting a lane run: which PRs get the report, the note on the GPU
jobs a run skipped, the report of a repository whose files cannot be analysed. Pure:
`handlers/workflow_run.py` reads, analyses and writes."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .analysis import Analysis, AnalysisError
from .config import CONFIG_PATH, DEFAULT_LANES, ConfigError, RepoConfig, lane_name
from .edit import EditError, VerificationError
from .report import MARKER, code, md_escape, md_text
from .timing import BundleError
from .verify import PatchCheckError
from .workflow import WorkflowError

PR_REPORT_TITLE = "foldbot: AMD CI setup of this pull request's run"

#: Problems with the repository's own files: reported on the dashboard, not retried.
USER_ERRORS = (AnalysisError, BundleError, ConfigError, WorkflowError, EditError, VerificationError, PatchCheckError)


def comment_policy(config: RepoConfig, *, forced: bool) -> str:
    """Whether a PR the run tested gets the report as a comment: "always", "never", or
    "if-ci" (when it changes CI files). `forced`: someone asked for it on that PR (but with
    `comment_on: none` no PR gets one: the dashboard has the report)."""
    if config.comment_on == "none":
        return "never"
    return "always" if forced or config.comment_on == "all-prs" else "if-ci"


def skipped_note(analysis: Analysis) -> str | None:
    """The GPU jobs this run skipped, and how to run them."""
    skipped = sorted({j.workflow_job for j in analysis.latest.amd_jobs
                      if j.conclusion == "skipped" and j.workflow_job})
    if not skipped:
        return None
    lane = lane_name(analysis.latest.workflow_path)
    listed = ", ".join(code(job) for job in skipped)
    return (f"**Skipped in this run** ({len(skipped)} GPU jobs, by the change filter or the gate): {listed}. "
            f"A maintainer with write access can run them with `/dispatch {lane}`.")


def lane_change_note(paths: Sequence[str], default_branch: str, base: str | None = None,
                     called: Sequence[str] = ()) -> str | None:
    """On the comment of a PR that changes lane files (or `called`: reusable workflows the lanes call with their
    shards, whose timeouts the report reads): what the report is about. `base`: the branch the PR merges into,
    when known (a backport's merge leaves the default branch's files as they are)."""
    if not paths:
        return None
    listed = ", ".join(code(path) for path in paths)
    reads = f" and reads the workflows they call there ({', '.join(code(p) for p in called)})" if called else ""
    after = ("the first run after the merge reports on the new files" if base in (None, default_branch) else
             f"merging it into {code(base)} leaves the lane files of `{default_branch}`, and so the reports, as they are")
    return (f"**This PR changes {listed}**: foldbot measures and patches the lane files of `{default_branch}`{reads}, "
            "so the suggestions and their patch are about those, not about this PR's version of them (its patch may "
            f"not apply here); {after}.")


def unconfigured_body(repo: str, config: RepoConfig, found: dict[str, list[str]]) -> str:
    """The dashboard of a repository foldbot measures nothing in, though some of its workflow
    files run jobs on AMD runners (`bot.repo.amd_workflows`): which, and the config that makes
    them lanes."""
    default = config.lanes == DEFAULT_LANES
    lanes = ", ".join(code(p) for p in config.lanes) + (" (the default)" if default else "")
    listed = "\n".join(f"- {code(path)}: {', '.join(code(j) for j in jobs[:8])}"
                       + (f" and {len(jobs) - 8} more" if len(jobs) > 8 else "") for path, jobs in found.items())
    config_text = "\n".join(["lanes:", *(f"  - {json.dumps(path)}" for path in found)])  # (a name stays one line)
    return (f"{MARKER}\n### foldbot: AMD CI setup report\n\n"
            f"foldbot is installed on {md_escape(repo)}, but measures none of its workflow files: the lanes it "
            f"reads are the files that match `lanes` in `{CONFIG_PATH}` ({lanes}), and none does. These run jobs "
            f"on AMD runners:\n\n{listed}\n\n"
            f"To measure them, add to `{CONFIG_PATH}` on the default branch"
            + (" (and `amd_runner_pattern`, should your runners' labels not name the GPU)" if default else "")
            + f":\n\n```yaml\n{config_text}\n```\n\n"
            "The next completed run of a lane then writes its report here.\n")


#: The most of an error's text a reply or the dashboard shows (a file's own text can make one any length).
ERROR_TEXT_LIMIT = 2000


def clipped(message: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    """An error's text, cut to `limit` characters (saying so): GitHub refuses a comment over 65,536."""
    return message if len(message) <= limit else f"{message[:limit]}\u2026 (cut: {len(message):,} characters in all)"


_ERROR_HEAD = f"{MARKER}\n### foldbot: AMD CI setup report\n\nfoldbot could not analyse "


def is_error_body(body: str) -> bool:
    """Whether a dashboard's text is `error_body`'s (one written before its state was marked so too)."""
    return body.startswith(_ERROR_HEAD)


def error_body(repo: str, message: str) -> str:
    return (f"{_ERROR_HEAD}{md_escape(repo)}: {md_text(clipped(message))}\n\n"
            "Fix the file it names; the report comes back with the next completed lane run, or once the fix is on "
            "the default branch, when foldbot next looks for missed runs (every 30 minutes as deployed).\n")

