"""The rules of `/fold approve [<patch-id>]`: commit exactly the patch a maintainer
saw, on a branch, and open a pull request. If the lane files moved since, the plan is
recomputed, and a different result is shown for a new approval instead of being
committed. Pure: `handlers/fold_approve.py` reads and writes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Mapping

from .github import NOT_ACCESSIBLE, GitHubError
from .permissions import permitted
from .replies import Refusal
from .report import code, md_escape
from .timing import JobMatcher, JobRef
from .edit import patch_id as compute_patch_id
from .states import ReportState
from .workflow import Workflow, parse_workflow

BRANCH_PREFIX = "foldbot/fold-"


@dataclass(frozen=True)
class CommitPatch:
    """Commit the report's own patch: the lane files are as the report saw them."""

    patch: str
    patch_id: str


@dataclass(frozen=True)
class Recompute:
    """The lane files moved: analyse the report's runs again on the files as they are."""

    runs: tuple[int, ...]
    patch_id: str


def decide(state: ReportState | None, requested: str | None, role: str, needed: str, user: str,
           blobs_now: Mapping[str, str], *, dashboard: bool = False) -> CommitPatch | Recompute | Refusal:
    """`requested`: the id the command names (the whole patch's, or one suggestion's), or None (the whole).
    `dashboard`: the command is on the dashboard issue, whose report is the lane's latest run's."""
    refused = permitted(role, needed, "/fold approve", user)
    if refused:
        return Refusal(refused)
    if state is None or not state.patch_id:
        if dashboard:
            return Refusal("The dashboard holds no patch now: its lane's latest run left nothing to fold (the report "
                           "says why).")
        return Refusal("There is no foldbot patch here to approve yet. `/fold refresh` writes this PR's report (with "
                       "a patch, if its lane run allows one); the dashboard issue holds the latest lane run's patch: "
                       "approve it there, by its id.")
    current = requested or state.patch_id
    if current not in state.ids:
        others = [f"`{i}`" for i in state.ids if i != state.patch_id]
        alone = f" (and {', '.join(others)} for single suggestions)" if others else ""
        return Refusal(f"`{md_escape(current)}` is not the current patch: the report shows `{state.patch_id}`{alone}. "
                       f"Read it, then `/fold approve {state.patch_id}`.")
    paths = sorted(state.blobs)
    if paths and all(blobs_now.get(p) == state.blobs[p] for p in paths):
        patch = state.patch_for(current)
        if not patch:
            return Refusal("The report does not carry its patch (it is older than this foldbot); "
                           "`/fold refresh` rewrites it, then approve again.")
        if compute_patch_id(patch) != current:
            return Refusal(f"The report's patch does not match its id `{current}`; nothing was committed. "
                           "`/fold refresh` rewrites the report.")
        return CommitPatch(patch, current)
    return Recompute(state.runs, current)


def after_recompute(current: str, recomputed: Mapping[str, str], whole: str | None,
                    default_branch: str) -> Refusal | None:
    """None when the recomputed plan still has the approved patch (`recomputed`: its
    patches by id; commit that one), else the reply pointing at the new id."""
    if current in recomputed:
        return None
    if whole is None:
        return Refusal(f"The lane files changed on `{default_branch}` since the report, and "
                       "nothing is left to fold. The report above is updated; nothing was committed.")
    return Refusal(f"The lane files changed on `{default_branch}` since the report; the plan is "
                   f"recomputed and the patch is now `{whole}` (updated above). "
                   f"Nothing was committed: review it, then `/fold approve {whole}`.")


def workflow_permission_refusal(error: GitHubError) -> Refusal | None:
    """GitHub refuses changes to `.github/workflows/` from an App without `workflows`."""
    if error.status in (403, 422) and "workflow" in error.message.lower():
        return Refusal(
            "GitHub refused to change `.github/workflows/`: the App lacks the **Workflows: write** permission. "
            "An organisation owner can grant it under Settings → GitHub Apps → foldbot → Permissions "
            "(Repository permissions → Workflows: Read and write), then accept the new permission; "
            f"approve again afterwards. (GitHub said: {md_escape(one_line(error.message)[:200])})")
    return None


def access_refusal(error: GitHubError, branch: str) -> Refusal | None:
    """GitHub's 403 "Resource not accessible by integration" to a write the App's permissions do
    not cover (a report-only installation, `register --read-only`): no retry gets past it, so
    the reply says what to grant (`branch`: the approval's, made already when the pull request
    is what GitHub refused)."""
    if error.status != 403 or NOT_ACCESSIBLE not in error.message.lower():
        return None
    if error.path.rstrip("/").endswith("/pulls"):
        grant, done = ("Pull requests", f"The branch `{branch}` holds the patch; approving again, once granted, opens "
                                        "its pull request.")
    else:
        grant, done = "Contents", "Nothing was committed."
    return Refusal(
        f"GitHub refused foldbot's write (403): the App lacks the **{grant}: write** permission (a report-only "
        f"installation has it read-only). {done} An organisation owner can grant it under Settings → GitHub Apps → "
        f"foldbot → Permissions (Repository permissions → {grant}: Read and write), then accept the new permission; "
        f"approve again afterwards. (GitHub said: {md_escape(one_line(error.message)[:200])})")


def one_line(message: str) -> str:
    """GitHub's message on one line: its lines joined, a line without closing punctuation taken as
    the heading of the next ("Repository rule violations found\n\nCannot create ref ..." reads
    "Repository rule violations found: Cannot create ref ...", not "found Cannot")."""
    lines = [" ".join(line.split()) for line in message.splitlines() if line.strip()]
    return " ".join(line if i == len(lines) - 1 or line[-1] in ".:;!?,)" else f"{line}:"
                    for i, line in enumerate(lines))


def write_refusal(error: GitHubError, branch: str) -> Refusal | None:
    """Any other 4xx GitHub gives the approval's writes (not a rate limit): a repository rule that
    restricts creating branches ("Repository rule violations found"), a validation failure. Trying
    again gets the same answer until someone changes what it names, so the reply quotes it. A
    read's error (a 404 of a repository the App lost, a 401) is no refusal of the writes: None,
    and it is handled as any failed call is."""
    if not 400 <= error.status < 500 or error.status in (401, 429) or "rate limit" in error.message.lower() \
            or error.method not in ("POST", "PATCH", "PUT"):
        return None
    said = one_line(error.message)[:300]
    path = error.path.rstrip("/")
    if path.endswith("/pulls"):
        return Refusal(f"GitHub refused to open the pull request ({error.status}: {md_escape(said)}). The branch "
                       f"`{branch}` holds the patch; approve again once that is resolved, and it opens the pull "
                       "request.")
    if path.endswith("/git/refs"):
        return Refusal(f"GitHub refused to create the branch `{branch}` ({error.status}: {md_escape(said)}); nothing "
                       "was committed. A repository rule or branch protection that covers `foldbot/*` branches may "
                       "forbid it: let the App create them (a bypass for it, or a rule that leaves them out), then "
                       "approve again.")
    return Refusal(f"GitHub refused to write the patch's commit ({error.status}: {md_escape(said)}); nothing was "
                   "committed. Approve again once that is resolved.")


def pull_title(patch_id: str) -> str:
    return f"foldbot: fewer AMD setup cycles (patch {patch_id})"


def changed_jobs(path: str, before: str, after: str) -> list[str]:
    """The jobs of a workflow file that a patch changed, in the file's order: a host that took a
    suite's steps, a matrix with fewer shards (a job it removed is not among them)."""
    old = parse_workflow(before, path).data.get("jobs") or {}
    new = parse_workflow(after, path).data.get("jobs") or {}
    return [job_id for job_id, job in new.items() if job_id in old and old[job_id] != job]


@dataclass(frozen=True)
class GoneCheck:
    """A required check that no job gives once a patch is merged."""

    check: str
    where: tuple[str, ...]  # branch protection, ruleset <id>: each place that requires it
    job: str  # the job that gave it
    path: str  # its lane file
    shard: tuple[tuple[str, str], ...] = ()  # the matrix values of a trimmed shard; () for a job folded away

    def line(self) -> str:
        what = (f"shard {', '.join(f'{k}: {v}' for k, v in self.shard)} of {code(self.job)}, which the patch trims: "
                "take it out of the rule" if self.shard else
                f"{code(self.job)}, which the patch folds away: require the check of the job its tests now run in")
        return f"- {code(self.check)} ({', '.join(self.where)}): {what} ({code(self.path)})"


def required_checks_gone(before: Mapping[str, str], after: Mapping[str, str],
                         required: Mapping[str, list[str]]) -> list[GoneCheck]:
    """Each required check that a job of a patched lane file gives before the patch and no job
    of them gives after it: a folded job's, a trimmed shard's (a check a shard no longer in the
    matrix gave is not the patch's). A check is read as GitHub names a job's check run
    (`bot.timing.JobMatcher`, which reads the runs' job names so)."""
    matchers = [(path, JobMatcher(parse_workflow(before[path], path)), JobMatcher(parse_workflow(after[path], path)))
                for path in sorted(after)]
    gone = []
    for check, where in sorted(required.items()):
        given = [(path, ref, new) for path, old, new in matchers for ref in [old.match(check)] if _runs(old.workflow, ref)]
        if given and not any(_runs(new.workflow, new.match(check)) for _, _, new in matchers):
            path, ref, new = given[0]  # (a job of one id in both lanes: named once)
            assert ref.job_id is not None
            shard = ref.matrix if ref.job_id in new.workflow.jobs else ()
            gone.append(GoneCheck(check, tuple(where), ref.job_id, path, shard))
    return gone


def _runs(workflow: Workflow, ref: JobRef) -> bool:
    """Whether the workflow makes the job a check names, with its matrix values (an axis trimmed
    of one does not; GitHub writes a boolean value as `true`)."""
    job = workflow.jobs.get(ref.job_id or "")
    if job is None:
        return False
    axes = job.matrix_axes
    return all(key not in axes or value in {str(v).lower() if isinstance(v, bool) else str(v) for v in axes[key]}
               for key, value in ref.matrix)


#: The most required checks a pull request or a reply names one by one.
NAMED = 20


def required_note(branch: str, gone: list[GoneCheck], unread: list[tuple[str, GitHubError]], required: int) -> str:
    """What the approval PR says of `branch`'s required checks (`required` of them were read):
    those no job gives once the patch is merged, what could not be read, or that none goes."""
    if gone:
        lines = [g.line() for g in gone[:NAMED]] + ([f"- and {len(gone) - NAMED} more"] if len(gone) > NAMED else [])
        text = (f"**Required checks:** {code(branch)} requires {_plural(len(gone), 'check')} that no job gives once "
                f"this patch is merged: GitHub would wait for {'it' if len(gone) == 1 else 'them'} on this pull request "
                "and on every one after it. Change each rule before merging (Settings → Branches, or Rules):\n\n"
                + "\n".join(lines))
    elif len(unread) == 2:
        text = "**Required checks:** foldbot could not read them."
    elif not required:
        text = f"**Required checks:** {code(branch)} requires none{' in its rulesets' if unread else ''}."
    else:
        text = f"**Required checks:** none of those {code(branch)} requires goes with this patch."
    if unread:
        text += f"\n\n{_unread(branch, unread)}: make sure no required check is one of a job the patch folds away " \
                "or of a shard it trims."
    return text


def required_reply(branch: str, gone: list[GoneCheck], unread: list[tuple[str, GitHubError]]) -> str:
    """What the approval's reply adds: the required checks that go, or what could not be read."""
    said = ""
    if gone:  # (where each is required, here too: a pull request opened before says what was true then)
        named = ", ".join(f"{code(g.check)} ({', '.join(g.where)})" for g in gone[:5]) + \
            (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        said = f" Before merging it: {code(branch)} requires {named}, which no job gives once it is merged."
    if unread:
        said += f" {_unread(branch, unread)}: make sure none of {'the others' if gone else 'its required checks'} goes " \
                "with this patch."
    return said


def _unread(branch: str, unread: list[tuple[str, GitHubError]]) -> str:
    said = " or its ".join(f"{what} ({error.status}: {md_escape(one_line(error.message))})" if error.status else
                           f"{what} (no answer from GitHub)" for what, error in unread)
    return f"foldbot could not read {code(branch)}'s {said}"


def _plural(n: int, word: str) -> str:
    return f"{'this' if n == 1 else n} {word}{'' if n == 1 else 's'}"


def pull_body(patch_id: str, user: str, number: int, summary: str, runs: Mapping[str, list[list[str]] | None],
              required: str = "") -> str:
    """`runs`: each patched lane's name, and the `/dispatch` commands that run what the patch
    changed, by the jobs each names (none: the jobs its last run skipped; None: `/dispatch`
    cannot run the lane: no `workflow_dispatch` trigger with a `target_stage` input)."""
    commands = [" ".join(["/dispatch", name, *jobs]) for name, each in runs.items() if each is not None for jobs in each]
    manual = [f"`{name}`" for name, each in runs.items() if each is None]
    note = ("**Note:** a change to workflow files alone may not trigger the lanes it folds (their path filters and "
            "change gates look at the code).")
    if commands:  # (in a block: its text, or its copy button, pastes as the commands themselves)
        note += (" Run the jobs it changes on this PR before merging: comment these lines, a command each (the "
                 "block's copy button takes them all):\n\n```\n" + "\n".join(commands) + "\n```")
    if manual:
        note += (f"\n\n`/dispatch` cannot run lane {', '.join(manual)} (its file has no `workflow_dispatch` trigger "
                 "with a `target_stage` input): have it run on this branch another way before merging.")
    checks = f"{required}\n\n" if required else ""
    return f"foldbot patch `{patch_id}`, approved by {md_escape(user)} in #{number}.\n\n{summary}\n\n{checks}{note}\n"


def blob_sha(text: str) -> str:
    """The git blob SHA of a file's text (what GitHub lists as a changed file's `sha`)."""
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def branch_conflict(branch: str) -> Refusal:
    return Refusal(f"The branch `{branch}` already exists with other content; foldbot does not "
                   "overwrite it. Delete it, or approve after the report is refreshed.")
