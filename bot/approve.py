"""The rules of `/fold approve [<patch-id>]`: commit exactly the patch a maintainer
saw, on a branch, and open a pull request. If the lane files moved since, the plan is
recomputed, and a different result is shown for a new approval instead of being
committed. Pure: `handlers/fold_approve.py` reads and writes."""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping

from .github import NOT_ACCESSIBLE, GitHubError
from .permissions import permitted
from .replies import Refusal
from .report import code, md_escape
from .plan import PassedShards, ShardGroup, called_values, partitions_literal, passed_shards, with_of
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
        return Refusal(f"{code(current)} is not the current patch: the report shows `{state.patch_id}`{alone}. "
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
        return Refusal(f"The lane files (or a workflow they call) changed on `{default_branch}` since the report, and "
                       "nothing is left to fold. The report above is updated; nothing was committed.")
    return Refusal(f"The lane files (or a workflow they call) changed on `{default_branch}` since the report; the plan is "
                   f"recomputed and the patch is now `{whole}` (updated above). "
                   f"Nothing was committed: review it, then `/fold approve {whole}`.")


def workflow_permission_refusal(error: GitHubError, granted: dict[str, str] | None = None) -> Refusal | None:
    """GitHub refuses changes to `.github/workflows/` from an App without `workflows`: a push with its
    words ("... workflow ... without `workflows` permission"), and the Git Data API's tree of such a
    file with its plain 403 "Resource not accessible by integration" (404 to a token without the
    `workflow` scope): which permission is missing, the token's grant (`granted`) tells."""
    git_data = "/git/" in error.path and (error.status == 404 or (
        error.status == 403 and NOT_ACCESSIBLE in error.message.lower()))
    lacks = granted is not None and granted.get("contents") == "write" and granted.get("workflows") != "write"
    if (error.status in (403, 422) and "workflow" in error.message.lower()) or (git_data and lacks):
        return Refusal(
            "GitHub refused to change `.github/workflows/`: the App lacks the **Workflows: write** permission. "
            "An organisation owner can grant it under Settings → GitHub Apps → foldbot → Permissions "
            "(Repository permissions → Workflows: Read and write), then accept the new permission; "
            f"approve again afterwards. (GitHub said: {md_escape(one_line(error.message)[:200])})")
    return None


def access_refusal(error: GitHubError, branch: str, granted: dict[str, str] | None = None) -> Refusal | None:
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
        if "/git/" in error.path and (granted or {}).get("workflows") != "write":  # (a patch is of `.github/workflows/`)
            done += " A change to `.github/workflows/` needs **Workflows: write** as well."
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


#: A lane file parsed once for an approval, which reads each before and after the patch several
#: times (the jobs it changed, the `/dispatch` lines, the required checks that go). Never changed.
parsed = functools.lru_cache(maxsize=8)(parse_workflow)


def changed_jobs(path: str, before: str, after: str) -> list[str]:
    """The jobs of a workflow file that a patch changed, in the file's order: a host that took a
    suite's steps, a matrix with fewer shards (a job it removed is not among them)."""
    old = parsed(before, path).data.get("jobs") or {}
    new = parsed(after, path).data.get("jobs") or {}
    return [job_id for job_id, job in new.items() if job_id in old and old[job_id] != job]


def read_required(branch: Any, rules: Any) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """The status checks a branch requires, each with every place that requires it (its branch
    protection, rulesets), and what could not be read, with why: from GitHub's answers to
    `GET /branches/{branch}` and `GET /rules/branches/{branch}` (`RepoAPI.required_check_sources`;
    a `GitHubError` for a read that failed). A 404 for the rules is a GitHub Enterprise Server
    without rulesets: none."""
    required: dict[str, list[str]] = {}
    unread: list[tuple[str, str]] = []

    def add(context: Any, where: str) -> None:
        if isinstance(context, str) and context and where not in required.get(context, ()):
            required.setdefault(context, []).append(where)

    if isinstance(branch, GitHubError):
        unread.append(("branch protection", _why(branch)))
    elif isinstance(branch, dict) and branch.get("protected"):
        checks = (branch.get("protection") or {}).get("required_status_checks") \
            if isinstance(branch.get("protection"), dict) else None
        if not isinstance(checks, dict) or not isinstance(checks.get("contexts", []), list) \
                or not isinstance(checks.get("checks", []), list):
            unread.append(("branch protection", "GitHub did not show its required checks"))
        elif checks.get("enforcement_level") != "off":
            for context in checks.get("contexts") or ():
                add(context, "branch protection")
            for check in checks.get("checks") or ():
                add(check.get("context") if isinstance(check, dict) else None, "branch protection")
    if isinstance(rules, GitHubError):
        if rules.status != 404:
            unread.append(("rulesets", _why(rules)))
    else:
        for rule in rules if isinstance(rules, list) else ():
            if not isinstance(rule, dict) or rule.get("type") != "required_status_checks":
                continue
            where = f"ruleset {rule['ruleset_id']}" if isinstance(rule.get("ruleset_id"), int) else "a ruleset"
            if rule.get("ruleset_source_type") == "Organization":  # the repository's settings cannot change it
                where = f"{where} of the organization {rule.get('ruleset_source') or ''}".rstrip()
            parameters = rule.get("parameters") if isinstance(rule.get("parameters"), dict) else {}
            for check in parameters.get("required_status_checks") or ():
                add(check.get("context") if isinstance(check, dict) else None, where)
    return required, unread


def _why(error: GitHubError) -> str:
    return f"{error.status}: {md_escape(one_line(error.message))}" if error.status else "no answer from GitHub"


@dataclass(frozen=True)
class GoneCheck:
    """A required check that no job of the lane files gives once a patch is merged."""

    check: str
    where: tuple[str, ...]  # branch protection, ruleset <id>: each place that requires it
    job: str  # the job that gave it
    path: str  # its lane file
    shard: tuple[tuple[str, str], ...] = ()  # the matrix values of a trimmed shard; () for a job folded away
    #: for a job folded away: the job its steps now run in, and the shard of it that runs them (() for
    #: all of it); None when the patched file does not show it
    into: tuple[str, tuple[tuple[str, str], ...]] | None = None
    #: for a shard of a list the job is passed (pytorch's `test-matrix`): the check's name on the shard
    #: count the patch sets ("" when the patch trims that shard); None for any other check
    renamed: str | None = None

    def line(self) -> str:
        if self.renamed == "":  # (a list the job is passed, or the count it passes its reusable workflow)
            what = f"a shard the patch trims from the shard list of {code(self.job)}: take it out of the rule"
        elif self.renamed is not None:
            what = (f"the patch lowers `num_shards` in the shard list of {code(self.job)}, which is in the name: "
                    f"require {code(self.renamed)} instead")
        elif self.shard:
            what = f"the {_shard(self.shard)} shard of {code(self.job)} (the patch trims it): take it out of the rule"
        elif self.into is None:
            what = f"{code(self.job)} (the patch folds it away): require the check of the job its tests now run in"
        elif self.into[1]:
            what = (f"{code(self.job)} (the patch folds it into the {_shard(self.into[1])} shard of "
                    f"{code(self.into[0])}): require that shard's check instead")
        else:
            what = f"{code(self.job)} (the patch folds it into {code(self.into[0])}): require its check instead"
        return f"- {code(self.check)} ({', '.join(self.where)}): {what} ({code(self.path)})"


def _shard(values: tuple[tuple[str, str], ...]) -> str:
    return f"`{', '.join(f'{k}: {v}' for k, v in values)}`"


def required_checks_gone(before: Mapping[str, str], after: Mapping[str, str],
                         required: Mapping[str, list[str]]) -> list[GoneCheck]:
    """Each required check that a job of the lane files (`before`; `after`, every lane file as
    patched or not) gives before the patch and none gives after it: a folded job's, a trimmed
    shard's. A check is read as GitHub renders a job's name (`JobMatcher.rendered`), with a
    matrix combination the job really has (not one `exclude` takes away, nor a value it never
    had)."""
    if not required:
        return []
    matchers = [(path, JobMatcher(parsed(before[path], path)), JobMatcher(parsed(after[path], path)))
                for path in sorted(after)]
    gone = []
    for check, where in sorted(required.items()):
        given = [(path, old.rendered(check), old, new) for path, old, new in matchers if _given(old, check)]
        if given and not any(_given(new, check) for _, _, new in matchers):
            path, ref, old, new = given[0]  # (a job of one id in two lanes: named once)
            listed = _listed(old.workflow, ref, check)
            if listed is not None:
                gone.append(GoneCheck(check, tuple(where), listed[0], path,
                                      renamed=_renamed(new.workflow, *listed, check)))
                continue
            assert ref.job_id is not None
            if _partition_ids(old.workflow, ref.job_id) is not None:  # (a shard the count a caller passes drops)
                gone.append(GoneCheck(check, tuple(where), ref.job_id, path, renamed=""))
            elif ref.job_id in new.workflow.jobs:
                gone.append(GoneCheck(check, tuple(where), ref.job_id, path, ref.matrix))
            else:
                into = folded_into(old.workflow, new.workflow, ref.job_id)
                gone.append(GoneCheck(check, tuple(where), ref.job_id, path, into=into))
    return gone


def _given(matcher: JobMatcher, check: str) -> bool:
    """Whether a job of the matcher's workflow gives the check (`_gives`); for a check that names a
    shard of a list a caller is passed, whether the list has that shard (`_listed`)."""
    ref = matcher.rendered(check)
    if _listed(matcher.workflow, ref, check) is not None:
        return True
    if len(called_values(check)) >= 3 and any(_passed(matcher.workflow, job_id) for job_id in _callers(ref)):
        return False  # (a caller gives any `<name> / ...` check: for a shard of its list, only the list tells)
    shard = called_values(check)[-1:]
    ids = _partition_ids(matcher.workflow, ref.job_id)
    if ids is not None and shard and re.fullmatch(r"[0-9]+", shard[0]):
        return int(shard[0]) in ids  # (a shard of the count a caller passes its reusable workflow, SGLang's stages)
    return _gives(matcher.workflow, ref, check)


def _partition_ids(workflow: Workflow, job_id: str | None) -> list[int] | None:
    """The shard ids a caller passes its reusable workflow as a JSON literal (`partitions: '{"size":14,"arr":[...]}'`,
    `plan.partitions_literal`), when it passes one; None otherwise."""
    job = workflow.jobs.get(job_id or "")
    given = with_of(workflow, job) if job is not None and job.uses else None
    found = [data["arr"] for value in (given.values() if isinstance(given, dict) else ())
             if (data := partitions_literal(value, least=1)) is not None]
    return found[0] if len(found) == 1 else None


def _callers(ref: JobRef) -> tuple[str, ...]:
    """The jobs a check's name may be of (several that share a `name:`, as pytorch's build and test callers)."""
    return ref.ambiguous or ((ref.job_id,) if ref.job_id else ())


def _passed(workflow: Workflow, job_id: str, least: int = 2) -> PassedShards | None:
    job = workflow.jobs.get(job_id)
    return passed_shards(workflow, job, least) if job is not None and job.uses else None


def _listed(workflow: Workflow, ref: JobRef, check: str) -> tuple[str, ShardGroup] | None:
    """The caller whose passed shard list (`plan.passed_shards`) has the shard a check names
    (`<caller name> / <job> (<config>, <shard>, <num_shards>, <runner>, ...)`, as GitHub writes it),
    and that shard's configuration; else None."""
    values = called_values(check)
    if not check.rstrip().endswith("(" + ", ".join(values) + ")"):
        return None  # (not as GitHub renders a matrix's values)
    for job_id in _callers(ref):
        passed = _passed(workflow, job_id)
        for group in passed.groups if passed else ():
            if group.holds(values) and int(values[1]) <= group.count:
                return job_id, group
    return None


def _renamed(workflow: Workflow, job_id: str, group: ShardGroup, check: str) -> str:
    """A list shard's check on the count the patched list gives its configuration (`group`, as it
    was), or "" when the shard is gone from it."""
    values = called_values(check)
    passed = _passed(workflow, job_id, least=1)  # (a configuration trimmed to one shard is still listed)
    for new in passed.groups if passed else ():
        if (new.config, new.runner) == (group.config, group.runner) and int(values[1]) <= new.count:
            return check[:check.rindex("(")] + "(" + ", ".join((values[0], values[1], str(new.count), *values[3:])) + ")"
    return ""


#: The `if:` foldbot gives a step it moves onto one shard (`edit.shard_condition`): `matrix.<key> == <value> && ...`.
_ON_SHARD = re.compile(r"\s*matrix\.([\w-]+) == ('(?:[^']|'')*'|[^\s']+) && \(success\(\) \|\| failure\(\)\)")


def folded_into(before: Workflow, after: Workflow, suite: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """The job of `after` that runs the steps of `before`'s job `suite` (gone from `after`), and
    the shard of it whose `if:` picks them (`((key, value),)`; `()`: every run of the job): a job of
    both with steps it had not (as written, `if:` and all) that are like one of the suite's (the same
    run, action, inputs and environment). None when no job or more than one does."""
    steps = {step.identity[:-1] for step in before.jobs[suite].steps}  # (not its `if:`, which the move changes)
    found: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for job in after.jobs.values():
        old = before.jobs.get(job.id)
        if old is None or job.id == suite:
            continue
        had = Counter(step.identity for step in old.steps)
        moved = []
        for step in job.steps:  # each step it had stands for one alike; the rest are new
            if had[step.identity] > 0:
                had[step.identity] -= 1
            elif step.identity[:-1] in steps:
                moved.append(step)
        if moved:  # (a step the job had before, alike, is not among them: its `if:` may pick another shard)
            on = next(filter(None, (_ON_SHARD.match(str(step.if_ or "")) for step in moved)), None)
            value = on.group(2) if on else ""
            if value.startswith("'"):
                value = value[1:-1].replace("''", "'")
            found.append((job.id, ((on.group(1), value),) if on else ()))
    return found[0] if len(found) == 1 else None


def _gives(workflow: Workflow, ref: JobRef, check: str) -> bool:
    """Whether the workflow has the job a check names, with its matrix values: a value of an
    axis or of an `include` entry, and no `exclude` entry that takes the combination away
    (GitHub writes a boolean value as `true`). A job with no matrix and no `name:` gives its id
    alone, not `<id> (...)`."""
    job = workflow.jobs.get(ref.job_id or "")
    if job is None:
        return False
    if job.matrix_expression:
        return True  # its combinations are known only when a run starts
    if not job.matrix:
        return job.name_template is not None or check.strip() == job.id or " / " in check
    values = dict(ref.matrix)
    include = [e for e in job.matrix.get("include") or () if isinstance(e, dict)]
    for key, value in values.items():
        written = [*job.matrix_axes.get(key, ()), *(e[key] for e in include if key in e)]
        if written and value not in {_rendered(v) for v in written}:
            return False
    excluded = [e for e in job.matrix.get("exclude") or () if isinstance(e, dict)]
    return not any(e and all(k in values and values[k] == _rendered(v) for k, v in e.items()) for e in excluded)


def _rendered(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


#: The most required checks a pull request names one by one, and a reply.
NAMED, NAMED_IN_REPLY = 20, 5


def required_note(branch: str, gone: list[GoneCheck], unread: list[tuple[str, str]], read: int) -> str:
    """What the approval PR says of `branch`'s required checks (`read`: how many were read):
    those no job gives once the patch is merged, what could not be read, or that none goes."""
    if gone:
        lines = [g.line() for g in gone[:NAMED]] + ([f"- and {len(gone) - NAMED} more"] if len(gone) > NAMED else [])
        text = (f"**Required checks:** {code(branch)} requires {_count(len(gone), 'check')} that no job of the lane "
                f"files gives once this patch is merged: GitHub would wait for {'it' if len(gone) == 1 else 'them'} on "
                "this pull request and on every one after it. Change each rule before merging (Settings → Branches, or "
                "Rules):\n\n" + "\n".join(lines))
    elif len(unread) == 2:  # (the sentence below says it all)
        return f"**Required checks:** {_unread(branch, unread)}: {_MAKE_SURE}."
    elif not read:
        places = " or ".join(p for p in ("branch protection", "rulesets") if p not in {what for what, _ in unread})
        text = f"**Required checks:** {code(branch)} requires none{f' in its {places}' if unread else ''}."
    else:
        text = f"**Required checks:** none of those {code(branch)} requires goes with this patch."
    if unread:
        text += f"\n\n{_unread(branch, unread)}: {_MAKE_SURE}."
    return text


_MAKE_SURE = "make sure no required check is one of a job the patch folds away or of a shard it trims"


def required_reply(branch: str, gone: list[GoneCheck], unread: list[tuple[str, str]]) -> str:
    """What the approval's reply adds: the required checks that go, and what could not be read
    (where each is required, here too: a pull request opened before says what was true then)."""
    said = ""
    if gone:
        named = ", ".join(f"{code(g.check)} ({', '.join(g.where)})" for g in gone[:NAMED_IN_REPLY]) + \
            (f" and {len(gone) - NAMED_IN_REPLY} more" if len(gone) > NAMED_IN_REPLY else "")
        said = f" Before merging it: {code(branch)} requires {named}, which no job of the lane files gives once it is merged."
    if unread:
        said += f" {_unread(branch, unread)}: make sure none of {'the others' if gone else 'its required checks'} goes " \
                "with this patch."
    return said


def _unread(branch: str, unread: list[tuple[str, str]]) -> str:
    return f"foldbot could not read {code(branch)}'s {' or its '.join(f'{what} ({why})' for what, why in unread)}"


def _count(n: int, word: str) -> str:
    """`this check`, `2 checks`."""
    return f"{'this' if n == 1 else n} {word}{'' if n == 1 else 's'}"


def pull_body(patch_id: str, user: str, number: int, summary: str, runs: Mapping[str, list[list[str]] | None],
              required: str = "") -> str:
    """`runs`: each patched lane's name, and the `/dispatch` commands that run what the patch
    changed, by the jobs each names (none: the jobs its last run skipped; None: `/dispatch`
    cannot run the lane: no `workflow_dispatch` trigger with a `target_stage` input)."""
    commands = [" ".join(["/dispatch", name, *jobs]) for name, each in runs.items() if each is not None for jobs in each]
    manual = [f"`{name}`" for name, each in runs.items() if each is None]
    note = ("**Note:** a change to workflow files alone may not trigger the lanes it changes (their path filters and "
            "change gates look at the code).")
    if commands:  # (in a block: its text, or its copy button, pastes as the commands themselves)
        note += (" Run the jobs it changes on this PR before merging: comment these lines, a command each (the "
                 "block's copy button takes them all):\n\n```\n" + "\n".join(commands) + "\n```\n\n"
                 "If a lane does run on this PR and its gate stops the run (a label it requires, say), `/dispatch` is "
                 "refused here as on any PR: meet the gate and re-run that run; it then runs what its change filter "
                 "picks, the lane file's jobs among them.")
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
