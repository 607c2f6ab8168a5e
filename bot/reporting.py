"""The rules of reporting a lane run: which PRs get the report, the note on the GPU
jobs a run skipped, the report of a repository whose files cannot be analysed. Pure:
`handlers/workflow_run.py` reads, analyses and writes."""

from __future__ import annotations

from .analysis import Analysis, AnalysisError
from .config import ConfigError, RepoConfig, lane_name
from .edit import EditError, VerificationError
from .report import MARKER, code, md_escape
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


def error_body(repo: str, message: str) -> str:
    return (f"{MARKER}\n### foldbot: AMD CI setup report\n\n"
            f"foldbot could not analyse {md_escape(repo)}: {md_escape(message)}\n\n"
            "Fix the file it names; the next completed lane run updates this report.\n")

