"""`/fold approve [<patch-id>]`: commit exactly the patch the report shows on a branch
and open a pull request. Read (role, foldbot's report and its state), decide
(`bot.approve.decide`: commit, recompute, or refuse), write (the branch through the
Git Data API, the pull request; or the recomputed report)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from bot import approve
from bot.api import RepoAPI
from bot.commands import Command
from bot.context import Context, PullRead
from bot.dispatch import LaneInfo
from bot.edit import FileEdit
from bot.github import GitHubError
from bot.publish import find_comment, find_dashboard, issues_off, read_report, read_state
from bot.replies import ROCKET, Outcome, Refusal
from bot.report import pull_summary, suggestion_states, to_markdown
from bot.reporting import PR_REPORT_TITLE, skipped_note
from bot.repo import run_bundle
from bot.states import report_scope, signature_of, signed
from bot.verify import PatchCheckError, apply_patch, check_patch

from .dispatch import fresh_token_after_refusal, note_permission_refused, role_of
from .workflow_run import analyze_with_logs


@dataclass(frozen=True)
class Committed:
    branch: str
    commit_sha: str
    pull: dict[str, Any]
    created: bool  # False: the branch and PR existed already with this content


async def run(api: RepoAPI, ctx: Context, pull: PullRead, command: Command) -> Outcome:
    # read
    # (on the dashboard issue, whose report is the issue itself: the patch of the lane's latest run)
    role, report = await asyncio.gather(role_of(api, pull.user), find_comment(api, pull.number, pull.login)
                                        if pull.pr else find_dashboard(api, pull.login))
    state = read_report(report["body"]) if report else None
    if command.patch_id is None and state is not None and state.patch_id:  # "the patch I see", by no id
        if not pull.pr:  # the dashboard's patch follows every lane run
            return Outcome.refused(Refusal(f"Name the patch you read: `/fold approve {state.patch_id}` (the "
                                           "dashboard changes with every lane run)."))
        # whole seconds: a rewrite in the comment's second may have come after it, so it counts as after
        if str(report.get("updated_at") or "") >= str(pull.comment["created_at"]):
            return Outcome.refused(Refusal(f"The report changed after your comment: read it, then `/fold approve "
                                           f"{state.patch_id}`. Nothing was committed."))
    # decide
    decision = approve.decide(state, command.patch_id, role, pull.config.approve_permission, pull.user, pull.blobs,
                              dashboard=not pull.pr)
    if isinstance(decision, Refusal):
        return Outcome.refused(decision)
    assert state is not None and report is not None
    signature = signature_of(read_state(report["body"]), ctx.state_keys,
                             report_scope(api.repo, pull.number if pull.pr else None))
    if signature != "ok":  # GitHub lets anyone with `write` edit foldbot's comments, and approving needs more
        again = ("`/fold refresh` writes the report again; approve its patch then." if pull.pr else
                 "The report of the lane's next run is written again; approve its patch then.")
        return Outcome.refused(Refusal(
            ("The report was written before foldbot signed its reports. Nothing was committed. " if signature == "none"
             else "The report's hidden state does not carry foldbot's signature: someone edited the report, it "
                  "was written with a webhook secret this foldbot no longer has, or under another name of this "
                  "repository (renamed or transferred since). Nothing was committed. ") + again))
    if isinstance(decision, approve.Recompute) and not pull.pr:
        return Outcome.refused(Refusal(
            f"The lane files (or a workflow they call) changed on `{pull.default_branch}` since this report; nothing "
            "was committed. The report of the lane's next run holds the patch for them: approve that one."))
    current = decision.patch_id
    if isinstance(decision, approve.CommitPatch):
        patch, summary = decision.patch, state.summary_for(current)
    else:  # the lane files moved: the same runs on the files as they are now
        bundles = [await run_bundle(api, await api.run(run_id), ctx.state.cache) for run_id in decision.runs]
        analysis = await analyze_with_logs(api, ctx, dict(pull.files), bundles, pull.config, dict(pull.called))  # as the report was made
        patches = {s.patch_id: (s.patch, pull_summary(analysis, s)) for s in analysis.suggestions}
        if analysis.patch_id:
            patches[analysis.patch_id] = (analysis.patch, pull_summary(analysis))
        refused = approve.after_recompute(current, {i: p for i, (p, _) in patches.items()}, analysis.patch_id,
                                          pull.default_branch)
        if refused:
            checks = (await asyncio.to_thread(check_patch, analysis.patch, analysis.edits, dict(pull.files))).summary() \
                if analysis.patch else None
            new_state = type(state)(workflow=state.workflow, base_sha=pull.base_sha, head_sha=state.head_sha,
                                    runs=state.runs, blobs=dict(pull.blobs), patch_id=analysis.patch_id,
                                    patch=analysis.patch, summary=pull_summary(analysis), pr=state.pr,
                                    suggestions=suggestion_states(analysis))
            try:
                board = await find_dashboard(api, pull.login)
            except GitHubError as exc:
                if not issues_off(exc):
                    raise
                board = None
            await api.update_comment(report["id"], to_markdown(
                analysis, checks=checks, state=signed(new_state.to_json(), ctx.state_keys,
                                                     report_scope(api.repo, pull.number)), title=PR_REPORT_TITLE,
                skipped_note=skipped_note(analysis), dashboard=(board or {}).get("html_url") or None))
            return Outcome.refused(refused)
        patch, summary = patches[current]
    before = dict(pull.files)
    files = apply_patch(patch, before)
    await asyncio.to_thread(check_patch, patch, [FileEdit(p, before[p], text) for p, text in files.items()], before)
    rival, sources = await asyncio.gather(_rival(api, current, set(files)),
                                          api.required_check_sources(pull.default_branch))
    if rival is not None:
        return Outcome.refused(rival)
    required, unread = approve.read_required(*sources)
    gone = approve.required_checks_gone(before, {**before, **files}, required)  # (a lane the patch leaves still gives its)
    # write
    body = approve.pull_body(current, pull.user, pull.number, summary, _dispatches(pull, before, files),
                             approve.required_note(pull.default_branch, gone, unread, len(required)))
    fresh_token_after_refusal(api, ctx)
    try:
        committed = await commit_and_open(api, base_sha=pull.base_sha, default_branch=pull.default_branch,
                                          patch_id=current, files=files, title=approve.pull_title(current), body=body,
                                          patch=patch)
    except GitHubError as exc:
        branch = f"{approve.BRANCH_PREFIX}{current}"
        granted = exc.granted  # (the refused call's token's: another may have been minted since)
        refusal = approve.workflow_permission_refusal(exc, granted) or approve.access_refusal(exc, branch, granted)
        if refusal is not None:  # the next approval writes with a new token
            note_permission_refused(api, ctx)
        refusal = refusal or approve.write_refusal(exc, branch)
        if refusal is None:
            raise
        return Outcome.refused(refusal)
    if isinstance(committed, Refusal):
        return Outcome.refused(committed)
    verb = "Opened" if committed.created else "Already open:"
    warning = approve.required_reply(pull.default_branch, gone, unread)
    return Outcome(f"{verb} {committed.pull.get('html_url')} (#{committed.pull['number']}) with patch `{current}` on "
                   f"branch `{committed.branch}`.{warning}", ROCKET,
                   {"pull": int(committed.pull["number"]), "patch_id": current})


async def _rival(api: RepoAPI, patch_id: str, paths: set[str]) -> Refusal | None:
    """An open foldbot PR of another patch to the same lane files (approved from another PR,
    or a run before): a second one would conflict with it once either is merged. Every fold
    branch is looked at (a merged PR's branch stays unless the repository deletes head
    branches; approvals are few, so are they)."""
    mine = f"{approve.BRANCH_PREFIX}{patch_id}"
    owner = api.repo.split("/", 1)[0]
    for branch in [b for b in await api.branches(approve.BRANCH_PREFIX) if b != mine]:
        for other in await api.pulls_from(owner, branch):
            shared = sorted(paths & {p for each in await api.pull_files(int(other["number"])) for p in each})
            if shared:
                return Refusal(
                    f"{other.get('html_url')} (#{other['number']}, patch `{branch.removeprefix(approve.BRANCH_PREFIX)}`) "
                    f"already changes {', '.join(f'`{p}`' for p in shared)}; a second PR would conflict with it once "
                    "either is merged. Nothing was committed: merge or close it first, then approve again.")
    return None


def _dispatches(pull: PullRead, before: dict[str, str], after: dict[str, str]) -> dict[str, list[list[str]] | None]:
    """For each lane the patch changes: the `/dispatch` commands (the jobs each names) that run
    what changed, as the patched file offers them (None: `/dispatch` cannot run the lane)."""
    out: dict[str, list[list[str]] | None] = {}
    for name, lane in pull.lanes.items():
        if lane.path not in after:
            continue
        patched = LaneInfo(name, lane.path, approve.parsed(after[lane.path], lane.path))
        if patched.undispatchable is not None:
            out[name] = None
            continue
        offered = set(patched.dispatchable(pull.config))
        jobs = [job for job in approve.changed_jobs(lane.path, before[lane.path], after[lane.path]) if job in offered]
        if patched.choice() is None:
            out[name] = [jobs]
        else:  # a choice (`target_stage_select`, or a `target_stage` of `type: choice`): one job a dispatch
            out[name] = [[job] for job in jobs] or [[]]
    return out


async def commit_and_open(api: RepoAPI, *, base_sha: str, default_branch: str, patch_id: str,
                          files: dict[str, str], title: str, body: str, patch: str) -> Committed | Refusal:
    """Blobs → a tree on the base commit's tree → a commit → the branch → the PR.
    Idempotent: the same patch approved again links the existing branch and PR (whatever
    else moved on the default branch since); a branch of that name whose lane files are not
    the patched ones is never overwritten."""
    branch = f"{approve.BRANCH_PREFIX}{patch_id}"
    present, pulls = await asyncio.gather(api.branch_sha(branch),
                                          api.pulls_from(api.repo.split("/", 1)[0], branch, state="all"))
    merged = next((p for p in pulls if p.get("merged_at")), None)
    if merged is not None and not any(p.get("state") == "open" for p in pulls):
        # (looked at before a branch is made: one deleted after the merge is not made again for nothing)
        return Refusal(f"This patch was merged already: {merged.get('html_url')} (#{merged['number']}). If that was "
                       "reverted since, revert the revert (GitHub's **Revert** button on the reverting PR): foldbot "
                       "opens one pull request per patch, and that one was merged.")
    created = present is None
    if present is None:
        message = f"{title}\n\n{_signature(patch_id)}"
        base = await api.commit(base_sha)
        entries = [{"path": path, "mode": "100644", "type": "blob", "sha": await api.create_blob(text)}
                   for path, text in sorted(files.items())]
        tree = await api.create_tree(base["tree"]["sha"], entries)
        commit_sha = await api.create_commit(message, tree, [base_sha])
        try:
            await api.create_branch(branch, commit_sha)
        except GitHubError as exc:  # 422 "Reference already exists": made since the look (a call GitHub carried
            present = await api.branch_sha(branch)  # out and answered 5xx, so it was sent again; a killed one)
            if exc.status != 422 or present is None:
                raise
    if present is not None:
        if not await _carries(api, default_branch, branch, files) and \
                not await _made_for(api, present, patch_id, patch, set(files), default_branch):
            return approve.branch_conflict(branch)
        commit_sha = present
    open_pull = next((p for p in pulls if p.get("state") == "open"), None)
    if open_pull is not None:
        return Committed(branch, commit_sha, open_pull, created)
    # none, or only closed ones without merging: a new pull request for this approval
    try:
        return Committed(branch, commit_sha, await api.open_pull(title, branch, default_branch, body), True)
    except GitHubError as exc:  # 422 "already exists": opened since the look (a killed process's call, landing)
        opened = [p for p in await api.pulls_from(api.repo.split("/", 1)[0], branch) if p.get("state") == "open"]
        if exc.status != 422 or not opened:
            raise
        return Committed(branch, commit_sha, opened[0], False)


async def _carries(api: RepoAPI, default_branch: str, branch: str, files: dict[str, str]) -> bool:
    """Whether the branch carries the patch and nothing else: what its commits change since
    they left the default branch is exactly the patched lane files (whatever the default branch
    did since, or brought in by a merge of it: "Update branch")."""
    changed = (await api.compare(default_branch, branch)).get("files") or []
    found = {str(f.get("filename")): f for f in changed}
    return _only(changed, files) and all(found[path].get("sha") == approve.blob_sha(text) for path, text in files.items())


def _signature(patch_id: str) -> str:
    """The line that ends foldbot's commit of a patch (`_made_for` looks for it)."""
    return f"Patch {patch_id}, proposed by foldbot and approved on its pull request."


async def _made_for(api: RepoAPI, sha: str, patch_id: str, patch: str, paths: set[str], default_branch: str) -> bool:
    """Whether the branch's head is foldbot's own commit of this patch, on a commit of the
    default branch that has moved since (the lane file edited there too, so the patch on today's
    file is no longer the branch's): one parent, which the default branch holds, the patch's
    signature, and the patch's files changed to what the patch makes of them there, no others.
    Anything committed on the branch after it is someone's: not this; nor is a commit anyone can
    write with the same message and files (someone with `write` can push that branch before the
    approval), which is why the files' contents are compared."""
    commit = await api.commit(sha)
    parents = commit.get("parents") or []
    if len(parents) != 1 or not str(commit.get("message") or "").rstrip().endswith(_signature(patch_id)):
        return False
    parent = str(parents[0].get("sha"))
    changed, onto = await asyncio.gather(api.compare(parent, sha), api.compare(parent, default_branch))
    if onto.get("status") not in ("ahead", "identical"):  # (a parent off the default branch: its changes would come too)
        return False
    found = await asyncio.gather(*(api.file(path, parent) for path in sorted(paths)))
    if any(item is None for item in found):
        return False
    try:
        made = apply_patch(patch, {path: item[0] for path, item in zip(sorted(paths), found) if item is not None})
    except PatchCheckError:
        return False
    listed = changed.get("files") or []
    blobs = {str(f.get("filename")): f.get("sha") for f in listed}
    return _only(listed, made) and all(blobs.get(path) == approve.blob_sha(text) for path, text in made.items())


def _only(changed: list[dict[str, Any]], files: dict[str, str]) -> bool:
    """Whether a compare's files are the patch's files, each modified, and no others (a list as
    long as GitHub lists may hold more)."""
    return len(changed) < COMPARE_FILES and {str(f.get("filename")) for f in changed} == set(files) and all(
        f.get("status") == "modified" for f in changed)


#: The most files GitHub's compare lists.
COMPARE_FILES = 300
