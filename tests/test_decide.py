"""The decisions of the commands and the reports, as tables: pure functions, no GitHub.

`bot.dispatch.decide` (who may dispatch what, on which ref, with which inputs),
`bot.approve.decide` / `after_recompute` (commit, recompute or refuse),
`bot.reporting.comment_policy`, `bot.permissions.permitted`."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import pytest

from bot import approve
from bot.config import RepoConfig
from bot.dispatch import DispatchPlan, DispatchRead, LaneRunNeeded, decide, lanes_of, run_title
from bot.edit import patch_id
from bot.permissions import Allowance, permitted
from bot.replies import CONFUSED, Outcome, Refusal, log_text, logged_outcome
from bot.reporting import comment_policy
from bot.states import ReplyState, ReportState
from tests.paths import AMD, ROCM720

REPO = "sgl-project/sglang"
HEAD = "ab" * 20
NOW = datetime(2026, 8, 1, 12, 0, tzinfo=timezone.utc)


def pr(fork: bool = False) -> dict[str, Any]:
    return {"number": 7, "state": "open", "head": {"sha": HEAD, "ref": "amd/change",
                                  "repo": {"full_name": "contributor/sglang" if fork else REPO}}}


def job(name: str, conclusion: str) -> dict[str, Any]:
    return {"name": name, "conclusion": conclusion, "steps": []}


@pytest.fixture
def base(sglang_before: dict[str, str]) -> DispatchRead:
    return DispatchRead(lane="rocm720", lanes=lanes_of({ROCM720: sglang_before[ROCM720], AMD: sglang_before[AMD]}),
                        config=RepoConfig(), repo=REPO, default_branch="main", user="writer", role="write",
                        allowance=None, replies=(), now=NOW, pr=pr())


RUN = {"id": 99, "status": "completed", "html_url": "https://github.com/r/actions/runs/99"}
PASSED_GATE = (job("call-gate / pr-gate", "success"), job("check-changes", "success"))
SKIPPED_KERNEL = job("sgl-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)", "skipped")
EARLIER = ReplyState("dispatch", 1, "/dispatch rocm720", "Writer", "2026-08-01T11:50:00Z", lane="rocm720", run_id=5)


@pytest.mark.parametrize("changes,reason", [
    ({"lane": "rocm999"}, "`rocm999` is not a lane of this repository. Lanes: `amd`, `rocm720`."),
    # a name in inline code is shown as typed (a backslash there would show), inert all the same
    ({"lane": "my_lane*<b>"}, "`my_lane*<b>` is not a lane of this repository."),
    ({"lane": "a`b @x <!-- y"}, "`a'b @\u200bx <\u200b!-- y` is not a lane of this repository."),
    ({"role": "read"}, "`dispatch` needs the **write** permission on this repository; writer has **read**"),
    ({"role": "triage"}, "needs the **write** permission"),
    ({"replies": (EARLIER,)}, "writer dispatched `rocm720` on this PR less than 30 minutes ago (run 5); try again in "
                              "20 minutes (GPU time is scarce: each lane of a PR is dispatched once per person in 30 "
                              "minutes)."),
    # the minutes left, rounded up: never "0 minutes"
    ({"replies": (replace(EARLIER, at="2026-08-01T11:30:30Z"),)}, "; try again in 1 minute (GPU time"),
    ({"replies": (replace(EARLIER, at="2026-08-01T11:42:20Z"),)}, "; try again in 13 minutes (GPU time"),
    ({"pr": pr(fork=True)}, "This PR comes from a fork: name the commit you reviewed, `/dispatch rocm720 sha=<sha>` with "
                            "its full 40-digit SHA"),
    ({"pr": pr(fork=True), "sha": "ab" * 6}, "On a PR from a fork, `sha=` takes the full 40-digit SHA of the commit you "
                                            "reviewed (the commit page's copy button gives it): a short one can be "
                                            "matched by another commit the fork's author makes, pushed after your "
                                            "review. Nothing was dispatched."),
    ({"pr": pr(fork=True), "sha": "1234567"}, "`1234567` is not this PR's head (`abababababab`): review the new commits"),
    ({"sha": "1234567"}, "`1234567` is not this PR's head (`abababababab`)."),
    ({"jobs": ("no-such-job",)}, "Not a job `rocm720` can run: `no-such-job`. Valid: `sgl-kernel-unit-test-amd-rocm720`"),
    ({"run": {}}, "No run of `.github/workflows/pr-test-amd-rocm720.yml` for `abababababab` yet"),
    ({"run": {**RUN, "status": "in_progress"}}, "is still in_progress: dispatch when it has finished."),
    ({"run": RUN, "run_jobs": (job("call-gate / pr-gate", "failure"), SKIPPED_KERNEL)},
     "The gate failed in run [99](https://github.com/r/actions/runs/99): `call-gate / pr-gate` failure."),
    ({"run": RUN, "run_jobs": PASSED_GATE}, "Nothing to run: run [99]"),
    ({"jobs": ("sgl-kernel-unit-test-amd-rocm720",), "run": {**RUN, "status": "in_progress"},
      "run_jobs": (job("call-gate / pr-gate", "failure"),)}, "The gate failed in run [99]"),
    ({"pr": {**pr(), "state": "closed"}}, "This PR is closed: nothing dispatched."),
    ({"pr": {**pr(), "state": "closed", "merged_at": "2026-08-01T11:00:00Z"}}, "This PR is merged: its commits are on"),
    ({"pr": {**pr(), "state": "closed", "merged_at": "2026-08-01T11:00:00Z"}, "default_branch": "amd/fix_rocm_tests"},
     "This PR is merged: its commits are on `amd/fix_rocm_tests`, whose own runs test them."),
    # another maintainer's dispatch of the same jobs (or more) for the same head, within the cooldown
    ({"replies": (replace(EARLIER, user="alice", lane="rocm720", sha=HEAD,
                          targets=("sgl-kernel-unit-test-amd-rocm720", "other")),),
      "jobs": ("sgl-kernel-unit-test-amd-rocm720",), "run": {}},
     "alice dispatched `sgl-kernel-unit-test-amd-rocm720` of `rocm720` for `abababababab` less than 30 minutes ago "
     "(run 5): not dispatched twice."),
    # GitHub did not say which run a dispatch started: it started one all the same
    ({"replies": (replace(EARLIER, run_id=None, targets=("sgl-kernel-unit-test-amd-rocm720",)),)},
     "writer dispatched `rocm720` on this PR less than 30 minutes ago; try again in 20 minutes"),
])
def test_dispatch_refusals(base: DispatchRead, changes: dict[str, Any], reason: str) -> None:
    decision = decide(replace(base, **changes))
    assert isinstance(decision, Refusal) and reason in decision.reason


def test_jobs_someone_else_dispatched_for_the_head_are_left_out_of_a_wider_dispatch(base: DispatchRead) -> None:
    """alice dispatched one job; bob's `/dispatch rocm720` a moment later named it among others: it was
    dispatched again (a 4-shard matrix, ~2 h of setup a shard, twice on the same code), and bob's reply
    did not say so. Only a dispatch of nothing new was refused."""
    alice = replace(EARLIER, user="alice", lane="rocm720", sha=HEAD, targets=("sgl-kernel-unit-test-amd-rocm720",))
    plan = decide(replace(base, user="bob", replies=(alice,), run={},
                          jobs=("sgl-kernel-unit-test-amd-rocm720", "stage-a-test-1-gpu-small-amd-rocm720")))
    assert isinstance(plan, DispatchPlan) and plan.targets == ("stage-a-test-1-gpu-small-amd-rocm720",)
    assert plan.inputs == {"target_stage": "stage-a-test-1-gpu-small-amd-rocm720", "pr_head_sha": HEAD}
    assert plan.left_out == ("alice dispatched `sgl-kernel-unit-test-amd-rocm720` of `rocm720` for `abababababab` "
                             "less than 30 minutes ago (run 5): not dispatched again.")


def test_a_lane_that_does_not_run_on_pull_requests_asks_for_the_jobs(base: DispatchRead) -> None:
    """SGLang's current `pr-test-amd.yml` runs on a schedule and by hand, never on a pull request:
    `/dispatch amd` said "No run of it for <sha> yet: wait for it", for a run that never comes."""
    from tests.sglang_current import LANES, workflow_text

    lanes = lanes_of({path: workflow_text(name) for name, (path, _) in LANES.items()})
    assert not lanes["amd"].runs_on_pulls and lanes["rocm720"].runs_on_pulls
    refusal = decide(replace(base, lane="amd", lanes=lanes))
    assert isinstance(refusal, Refusal) and refusal.reason.startswith(
        "`.github/workflows/pr-test-amd.yml` does not run on pull requests (its `on:` has no `pull_request`), so no "
        "run of it skipped jobs here: name them, `/dispatch amd <job-id> ...`. Valid: `sgl-kernel-unit-test-amd`")
    plan = decide(replace(base, lane="amd", lanes=lanes, jobs=("sgl-kernel-unit-test-amd",), run={}))
    assert isinstance(plan, DispatchPlan) and plan.targets == ("sgl-kernel-unit-test-amd",)


@pytest.mark.parametrize("changes,ref,targets", [
    # a same-repository PR: its own branch; the skipped jobs of its latest lane run
    ({"run": RUN, "run_jobs": (*PASSED_GATE, SKIPPED_KERNEL)}, "amd/change", ("sgl-kernel-unit-test-amd-rocm720",)),
    # named jobs: also when the head has no lane run (its gate did not fail)
    ({"jobs": ("sgl-kernel-unit-test-amd-rocm720",), "run": {}}, "amd/change", ("sgl-kernel-unit-test-amd-rocm720",)),
    # a fork PR with the reviewed head: the default branch's workflow, never the fork's
    ({"pr": pr(fork=True), "sha": HEAD, "jobs": ("sgl-kernel-unit-test-amd-rocm720",), "run": {}}, "main",
     ("sgl-kernel-unit-test-amd-rocm720",)),
    # reader, but on the allowlist: may dispatch, and the allowlist's cooldown replaces the default
    ({"role": "read", "allowance": Allowance(True, 0), "replies": (EARLIER,), "jobs": ("sgl-kernel-unit-test-amd-rocm720",),
      "run": {}},
     "amd/change", ("sgl-kernel-unit-test-amd-rocm720",)),
    # another's dispatch of other jobs, of another head, or over 30 minutes ago, is no twin
    *[({"replies": (replace(EARLIER, user="alice", lane="rocm720", sha=sha, targets=targets, at=at),),
        "jobs": ("sgl-kernel-unit-test-amd-rocm720",), "run": {}}, "amd/change", ("sgl-kernel-unit-test-amd-rocm720",))
      for sha, targets, at in ((HEAD, ("other",), EARLIER.at), ("cd" * 20, ("sgl-kernel-unit-test-amd-rocm720",), EARLIER.at),
                               (HEAD, ("sgl-kernel-unit-test-amd-rocm720",), "2026-08-01T11:20:00Z"))],
    # the user's dispatch of another lane does not hold this one back (approval PRs ask for every lane)
    ({"replies": (replace(EARLIER, lane="amd"),), "jobs": ("sgl-kernel-unit-test-amd-rocm720",), "run": {}},
     "amd/change", ("sgl-kernel-unit-test-amd-rocm720",)),
    # a refused dispatch in the replies (no run) does not start the cooldown
    ({"replies": (replace(EARLIER, run_id=None),), "jobs": ("sgl-kernel-unit-test-amd-rocm720",), "run": {}},
     "amd/change",
     ("sgl-kernel-unit-test-amd-rocm720",)),
])
def test_dispatch_plans(base: DispatchRead, changes: dict[str, Any], ref: str, targets: tuple[str, ...]) -> None:
    plan = decide(replace(base, **changes))
    assert isinstance(plan, DispatchPlan)
    assert (plan.ref, plan.targets, plan.head_sha) == (ref, targets, HEAD)
    assert plan.inputs == {"target_stage": ",".join(targets), "pr_head_sha": HEAD}
    assert run_title(plan) == f"[{','.join(targets)}] {HEAD}"


def test_a_fork_pr_needs_a_lane_that_takes_its_head(base: DispatchRead, sglang_before: dict[str, str]) -> None:
    """Dispatched from the default branch, a lane without `pr_head_sha` would test that
    branch, not the fork's commit: refused."""
    lanes = lanes_of({ROCM720: sglang_before[ROCM720].replace("pr_head_sha", "other_input")})
    decision = decide(replace(base, lanes=lanes, pr=pr(fork=True), sha=HEAD,
                              jobs=("sgl-kernel-unit-test-amd-rocm720",)))
    assert isinstance(decision, Refusal) and "has no `pr_head_sha` input" in decision.reason


def test_a_lane_without_a_target_stage_input_is_not_dispatched(base: DispatchRead,
                                                                 sglang_before: dict[str, str]) -> None:
    """A dispatch names its jobs in `target_stage`: a lane without it (or without
    `workflow_dispatch`) is refused with what its file lacks, named jobs or not."""
    lanes = lanes_of({ROCM720: sglang_before[ROCM720].replace("target_stage", "other_stage")})
    decision = decide(replace(base, lanes=lanes, jobs=("sgl-kernel-unit-test-amd-rocm720",)))
    assert decision == Refusal(
        f"`{ROCM720}` has no `target_stage` (or `target_stage_select`) input under `workflow_dispatch`: `/dispatch` "
        "cannot run `rocm720` (it names the jobs to run in a `target_stage` input of the lane's `workflow_dispatch` "
        "trigger).")
    assert lanes["rocm720"].undispatchable == "no `target_stage` (or `target_stage_select`) input under `workflow_dispatch`"
    lanes = lanes_of({ROCM720: sglang_before[ROCM720].replace("  workflow_dispatch:", "  repository_dispatch:")})
    assert lanes["rocm720"].undispatchable == "no `workflow_dispatch` trigger"
    assert lanes_of({ROCM720: sglang_before[ROCM720]})["rocm720"].undispatchable is None


def test_without_named_jobs_the_lane_run_is_read_first(base: DispatchRead) -> None:
    needed = decide(base)
    assert isinstance(needed, LaneRunNeeded) and needed.lane.name == "rocm720" and needed.head_sha == HEAD


PATCH = "--- a/x.yml\n+++ b/x.yml\n@@ -1 +1 @@\n-a\n+b\n"
PATCH2 = "--- a/y.yml\n+++ b/y.yml\n@@ -1 +1 @@\n-c\n+d\n"
STATE = ReportState(workflow=ROCM720, base_sha="c" * 40, head_sha=HEAD, runs=(1, 2, 3), blobs={ROCM720: "blob1"},
                    patch_id=patch_id(PATCH), patch=PATCH, summary="This saves ...")


@pytest.mark.parametrize("state,requested,role,blobs,expected", [
    (STATE, None, "write", {ROCM720: "blob1"}, "`/fold approve` needs the **maintain** permission"),
    (None, None, "maintain", {}, "There is no foldbot patch here to approve yet. `/fold refresh` writes this PR's"),
    (replace(STATE, patch_id=None, patch=""), None, "admin", {}, "There is no foldbot patch"),
    (STATE, "0123456789", "maintain", {ROCM720: "blob1"}, f"`0123456789` is not the current patch: the report shows `{STATE.patch_id}`"),
    (replace(STATE, patch=""), None, "maintain", {ROCM720: "blob1"}, "The report does not carry its patch"),
    (replace(STATE, patch=PATCH + "+c\n"), None, "maintain", {ROCM720: "blob1"},
     f"The report's patch does not match its id `{STATE.patch_id}`; nothing was committed."),
    (STATE, None, "maintain", {ROCM720: "blob1"}, approve.CommitPatch(PATCH, STATE.patch_id)),
    (STATE, STATE.patch_id, "admin", {ROCM720: "blob1"}, approve.CommitPatch(PATCH, STATE.patch_id)),
    (STATE, None, "maintain", {ROCM720: "blob2"}, approve.Recompute((1, 2, 3), STATE.patch_id)),
    # one suggestion alone, by its own id
    (replace(STATE, suggestions=((patch_id(PATCH2), PATCH2, "one"),)), patch_id(PATCH2), "maintain", {ROCM720: "blob1"},
     approve.CommitPatch(PATCH2, patch_id(PATCH2))),
    (replace(STATE, suggestions=((patch_id(PATCH2), PATCH2 + "+x\n", "one"),)), patch_id(PATCH2), "maintain",
     {ROCM720: "blob1"}, f"The report's patch does not match its id `{patch_id(PATCH2)}`"),
    (replace(STATE, suggestions=((patch_id(PATCH2), PATCH2, "one"),)), "0123456789", "maintain", {ROCM720: "blob1"},
     f"is not the current patch: the report shows `{STATE.patch_id}` (and `{patch_id(PATCH2)}` for single suggestions)"),
])
def test_approval(state: ReportState | None, requested: str | None, role: str, blobs: dict[str, str],
                  expected: object) -> None:
    decision = approve.decide(state, requested, role, "maintain", "someone", blobs)
    if isinstance(expected, str):
        assert isinstance(decision, Refusal) and expected in decision.reason
    else:
        assert decision == expected


def test_approval_on_the_dashboard_with_no_patch_says_the_lane_left_nothing_to_fold() -> None:
    decision = approve.decide(replace(STATE, patch_id=None, patch=""), "0123456789", "maintain", "maintain", "someone",
                              {ROCM720: "blob1"}, dashboard=True)
    assert decision == Refusal("The dashboard holds no patch now: its lane's latest run left nothing to fold (the "
                               "report says why).")


@pytest.mark.parametrize("recomputed,whole,expected", [
    ({"aaaa": "p"}, "aaaa", None),
    ({"bbbb": "p", "aaaa": "q"}, "bbbb", None),  # the approved suggestion is still one of the plan's
    ({}, None, "nothing is left to fold. The report above is updated; nothing was committed."),
    ({"bbbb": "p"}, "bbbb", "the patch is now `bbbb` (updated above). Nothing was committed: review it, then `/fold approve bbbb`."),
])
def test_after_a_recompute(recomputed: dict[str, str], whole: str | None, expected: str | None) -> None:
    refused = approve.after_recompute("aaaa", recomputed, whole, "main")
    assert (refused is None) if expected is None else (refused is not None and expected in refused.reason)


@pytest.mark.parametrize("comment_on,forced,policy", [
    ("ci-prs", False, "if-ci"), ("ci-prs", True, "always"), ("all-prs", False, "always"),
    ("none", False, "never"), ("none", True, "never"),
])
def test_which_prs_get_the_report(comment_on: str, forced: bool, policy: str) -> None:
    assert comment_policy(RepoConfig(comment_on=comment_on), forced=forced) == policy


@pytest.mark.parametrize("role,needed,what,allowance,allowed", [
    ("write", "write", "dispatch", None, True), ("admin", "maintain", "/fold approve", None, True),
    ("write", "maintain", "/fold approve", None, False), ("none", "write", "dispatch", None, False),
    ("read", "write", "dispatch", Allowance(True, None), True),
    ("read", "write", "dispatch", Allowance(False, None), False),
    ("read", "maintain", "/fold approve", Allowance(True, None), False),  # the allowlist is for dispatch only
    ("custom-role", "read", "dispatch", None, False),  # unknown roles rank lowest
])
def test_permissions(role: str, needed: str, what: str, allowance: Allowance | None, allowed: bool) -> None:
    assert (permitted(role, needed, what, "u", allowance) is None) == allowed


def test_state_blocks_round_trip_and_refuse_what_they_are_not() -> None:
    from bot.states import StateError

    assert ReportState.from_json(STATE.to_json()) == STATE
    reply = ReplyState("dispatch", 3, "/dispatch amd", "u", "2026-08-01T11:50:00Z", lane="amd", run_id=9,
                       targets=("a", "b"), sha=HEAD)
    assert ReplyState.from_json(reply.to_json()) == reply
    for bad in ({"v": 2}, {**STATE.to_json(), "runs": ["1"]}, {**STATE.to_json(), "patch_z": "not base64!"}, []):
        with pytest.raises(StateError):
            ReportState.from_json(bad)
    # the blocks written before versions: the same shape, read as such
    old = {k: v for k, v in STATE.to_json().items() if k not in ("v", "patch_z", "summary_z")}
    assert ReportState.from_json(old) == replace(STATE, patch="", summary="")
    # the dashboard's: every lane's runs reported and headline
    from bot.states import LaneFigures
    board = replace(STATE, reported={"a.yml": ((7, 1), (8, 2))},
                    lanes={"a.yml": LaneFigures(8, "https://github.com/o/r/actions/runs/8", HEAD, 3600.0, 1800.5, 4)})
    assert ReportState.from_json(board.to_json()) == board
    assert board.reporting("a.yml", 7, 1) == {"a.yml": ((8, 2), (7, 1))}  # once, the latest last
    assert board.reporting("b.yml", 9, 1) == {"a.yml": ((7, 1), (8, 2)), "b.yml": ((9, 1),)}
    for bad in ({"reported": {"a.yml": [[7]]}}, {"reported": []}, {"lanes": {"a.yml": [8, "u", HEAD, "1", 2, 3]}},
                {"lanes": {"a.yml": [8]}}):
        with pytest.raises(StateError):
            ReportState.from_json({**board.to_json(), **bad})


# -- which dispatch reply a run completes (handlers.workflow_run.started_it) -------------

def _reply(comment_id: int, at: str, run_id: int | None) -> ReplyState:
    return ReplyState("dispatch", comment_id, "/dispatch rocm720 X", "alice", at, lane="rocm720", run_id=run_id,
                      targets=("X",), sha=HEAD)


def _run(run_id: int, created_at: str) -> dict[str, Any]:
    return {"id": run_id, "created_at": created_at, "display_title": f"[X] {HEAD}"}


FIRST, SECOND = _run(111, "2026-08-01T10:00:20Z"), _run(222, "2026-08-01T10:05:05Z")


@pytest.mark.parametrize("reply,run,claimed,expected", [
    (_reply(1, "2026-08-01T10:00:00Z", None), FIRST, {222}, True),
    (_reply(1, "2026-08-01T10:00:00Z", None), SECOND, {222}, False),  # another reply's run, by its id
    (_reply(1, "2026-08-01T10:00:00Z", None), SECOND, set(), False),  # not the earliest after the command
    (_reply(2, "2026-08-01T10:05:00Z", None), SECOND, set(), True),
    (_reply(2, "2026-08-01T10:05:00Z", None), FIRST, set(), False),  # created before the command
    (_reply(2, "2026-08-01T10:05:00Z", 222), SECOND, set(), True),
])
def test_a_run_completes_the_reply_whose_dispatch_started_it(reply: ReplyState, run: dict[str, Any],
                                                              claimed: set[int], expected: bool) -> None:
    from handlers.workflow_run import started_it
    assert started_it(reply, run, claimed, [SECOND, FIRST]) is expected


def test_a_commands_log_line_is_one_plain_bounded_line() -> None:
    """`logged_outcome`: a refusal's reason is its reply's first sentence, links as their
    addresses, without markdown escapes; `log_text` escapes what could break a line."""
    state = ReplyState("fold-refresh", 1, "/fold refresh", "writer", "2026-08-01T11:50:00Z")
    refused = Outcome("Nothing refreshed: foldbot could not analyse [run 9](https://x/runs/9): `a\\_b` &lt;x&gt; "
                      "@\u200bbob\nsaid so, with **maintain**. Then more.", CONFUSED)
    assert logged_outcome(state, refused) == \
        "refused: Nothing refreshed: foldbot could not analyse run 9 (https://x/runs/9): `a_b` <x> @bob said so, with " \
        "maintain."
    assert logged_outcome(state, Outcome("x" * 300, CONFUSED)) == f"refused: {'x' * 199}\u2026"
    assert log_text(" /dispatch a\rb\x1b[2J\u2028c\t ", 100) == "/dispatch a\\rb\\x1b[2J\\u2028c"
    assert log_text("/dispatch " + "a" * 200, 20) == "/dispatch aaaaaaaaa\u2026"
    long_reason = Outcome("Nothing dispatched: " + "the lane waits for its gate " * 10 + "today.", CONFUSED)
    assert logged_outcome(state, long_reason) == \
        "refused: Nothing dispatched: " + "the lane waits for its gate " * 6 + "the lane\u2026"
    assert log_text("alpha beta gamma", 12) == "alpha beta\u2026"  # not "alpha beta g…"
    one = ReplyState("dispatch", 1, "/dispatch amd unit", "writer", "2026-08-01T11:50:00Z", lane="amd", run_id=7,
                     targets=("unit",), sha="a" * 40)
    assert logged_outcome(one, Outcome("Dispatched.", "rocket", link="https://x/runs/7")) == \
        "dispatched amd (1 job for aaaaaaaaaaaa): run 7 https://x/runs/7"


def test_the_approval_prs_note_gives_a_dispatch_line_per_command_a_lane_takes() -> None:
    """A lane with `target_stage` takes the jobs in one command, one with only `target_stage_select`
    a job a command; `/dispatch` cannot run one without either, and the note says so."""
    body = approve.pull_body("abc1234567", "lead", 7, "Saves.", {
        "rocm720": [["a-rocm720", "b-rocm720"]], "amd": [["a-amd"], ["b-amd"]], "nightly": None})
    assert body.endswith(
        "Run the jobs it changes on this PR before merging: comment these lines, a command each (the block's copy "
        "button takes them all):\n\n```\n/dispatch rocm720 a-rocm720 b-rocm720\n/dispatch amd a-amd\n"
        "/dispatch amd b-amd\n```\n\nIf a lane does run on this PR and its gate stops the run (a label it requires, "
        "say), `/dispatch` is refused here as on any PR: meet the gate and re-run that run; it then runs what its change "
        "filter picks, the lane file's jobs among them.\n\n`/dispatch` cannot run lane `nightly` (its file has no `workflow_dispatch` "
        "trigger with a `target_stage` input): have it run on this branch another way before merging.\n")


def test_only_a_refusal_of_the_approvals_writes_is_quoted_as_one() -> None:
    """`write_refusal` quotes a 4xx of the approval's writes (a ruleset's 422 on the branch); a read's
    error (the repository lost: 404; credentials: 401) is no refusal of the writes, and is left to the
    failed-call path. `access_refusal` quotes GitHub's words inert."""
    from bot.approve import access_refusal, write_refusal
    from bot.github import GitHubError

    api = "https://api.github.com/repos/o/r"
    ruled = write_refusal(GitHubError(422, "Repository rule violations found\n\nCannot create ref", "POST",
                                      f"{api}/git/refs"), "foldbot/fold-abc")
    assert ruled is not None and ruled.reason.startswith(
        "GitHub refused to create the branch `foldbot/fold-abc` (422: Repository rule violations found: Cannot create "
        "ref); nothing was committed.")
    assert write_refusal(GitHubError(404, "Not Found", "GET", f"{api}/compare/main...foldbot/fold-abc"), "b") is None
    assert write_refusal(GitHubError(401, "Bad credentials", "POST", f"{api}/pulls"), "b") is None
    assert write_refusal(GitHubError(403, "API rate limit exceeded", "POST", f"{api}/pulls"), "b") is None
    denied = access_refusal(GitHubError(403, "Resource not accessible by integration <b>@x</b>", "POST",
                                        f"{api}/git/blobs"), "b")
    assert denied is not None and "(GitHub said: Resource not accessible by integration &lt;b&gt;@\u200bx&lt;/b&gt;)" \
        in denied.reason


def test_the_required_checks_a_fold_of_the_current_lanes_takes_away() -> None:
    """SGLang's current lanes name their jobs with `format(...)` of the runner: the check GitHub
    requires is that name, and it goes with the folded job, in each lane; the host's stays, as
    does a check of another workflow (`lint`) or of a job the patch keeps."""
    from bot.analysis import analyze
    from bot.config import RepoConfig as Config
    from bot.verify import apply_patch
    from tests.sglang_current import LANES, history, workflow_text
    files = {LANES[lane][0]: workflow_text(lane) for lane in LANES}
    bundles, _ = history("rocm720")
    analysis = analyze(files, bundles, Config())
    fold = next(s for s in analysis.suggestions if (s.kind, s.job) == ("fold", "jit-kernel-unit-test-amd-rocm720"))
    after = apply_patch(fold.patch, files)
    required = {"jit-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)": ["branch protection"],
                "jit-kernel-unit-test-amd (linux-mi300-1gpu-sglang)": ["ruleset 7"],
                "jit-kernel-benchmark-test-amd-rocm720 (linux-mi300-1gpu-sglang)": ["branch protection"],
                "lint": ["branch protection"]}
    assert approve.required_checks_gone(files, after, required) == [
        approve.GoneCheck("jit-kernel-unit-test-amd (linux-mi300-1gpu-sglang)", ("ruleset 7",), "jit-kernel-unit-test-amd",
                          LANES["amd"][0], into=("jit-kernel-benchmark-test-amd", ())),
        approve.GoneCheck("jit-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)", ("branch protection",),
                          "jit-kernel-unit-test-amd-rocm720", LANES["rocm720"][0],
                          into=("jit-kernel-benchmark-test-amd-rocm720", ()))]
    assert approve.required_checks_gone(files, after, required)[1].line() == (
        "- `jit-kernel-unit-test-amd-rocm720 (linux-mi300-1gpu-sglang)` (branch protection): "
        "`jit-kernel-unit-test-amd-rocm720` (the patch folds it into `jit-kernel-benchmark-test-amd-rocm720`): require "
        f"its check instead (`{LANES['rocm720'][0]}`)")
    assert approve.required_checks_gone(files, after, {}) == []


MATRIX = "on: push\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    strategy:\n      matrix:\n" \
         "        flag: [true, false]\n    steps:\n      - run: pytest\n"


def test_a_required_check_of_a_matrix_value_gone_is_named_as_github_writes_it() -> None:
    """GitHub names a matrix job `t (false)` for a YAML `false`: that check goes with the value;
    `t (true)` stays, and `t (maybe)`, a value the matrix never had, is not the patch's."""
    after = {"ci.yml": MATRIX.replace("[true, false]", "[true]")}
    assert approve.required_checks_gone({"ci.yml": MATRIX}, after, {
        "t (true)": ["branch protection"], "t (false)": ["ruleset 3"], "t (maybe)": ["ruleset 3"]}) == [
        approve.GoneCheck("t (false)", ("ruleset 3",), "t", "ci.yml", (("flag", "false"),))]


def test_a_required_check_another_lane_file_still_gives_does_not_go() -> None:
    """Two lane files with a job of one name: the check goes only when neither gives it."""
    other = MATRIX.replace("flag: [true, false]", "flag: [false]")
    before = {"a.yml": MATRIX, "b.yml": other}
    changed = {"a.yml": MATRIX.replace("[true, false]", "[true]")}  # (what `apply_patch` gives: the files it changes)
    assert approve.required_checks_gone(before, {**before, **changed}, {"t (false)": ["ruleset 3"]}) == []
    both = {"a.yml": changed["a.yml"], "b.yml": other.replace("[false]", "[true]")}
    assert approve.required_checks_gone(before, both, {"t (false)": ["ruleset 3"]}) == [
        approve.GoneCheck("t (false)", ("ruleset 3",), "t", "a.yml", (("flag", "false"),))]


FOLD_BEFORE = """on: push
jobs:
  unit:
    runs-on: linux-mi300-gpu-1
    steps:
      - uses: actions/checkout@v4
      - run: pytest unit
  big:
    runs-on: linux-mi300-gpu-1
    strategy:
      matrix:
        gpu: ['mi300', "it's"]
    steps:
      - uses: actions/checkout@v4
      - run: pytest unit
      - run: pytest big
  other:
    runs-on: linux-mi300-gpu-1
    steps:
      - run: pytest other
"""
FOLD_AFTER = FOLD_BEFORE.split("  big:")[0].split("  unit:")[0] + "  big:" + FOLD_BEFORE.split("  big:")[1].replace(
    "      - run: pytest big\n",
    "      - run: pytest big\n      - run: pytest unit\n        if: matrix.gpu == 'it''s' && (success() || failure())\n")


def test_a_required_check_of_a_folded_job_names_the_shard_its_steps_now_run_on() -> None:
    """The host is the job with more steps like the suite's than it had (`big` ran `pytest unit`
    already: one more now), the shard is the one its `if:` picks; where two jobs gained such a step,
    none is named and the line says what to do in general."""
    from bot.workflow import parse_workflow
    before, after = parse_workflow(FOLD_BEFORE, "ci.yml"), parse_workflow(FOLD_AFTER, "ci.yml")
    assert approve.folded_into(before, after, "unit") == ("big", (("gpu", "it's"),))
    [gone] = approve.required_checks_gone({"ci.yml": FOLD_BEFORE}, {"ci.yml": FOLD_AFTER}, {"unit": ["ruleset 3"]})
    assert gone.line() == ("- `unit` (ruleset 3): `unit` (the patch folds it into the `gpu: it's` shard of `big`): "
                           "require that shard's check instead (`ci.yml`)")
    # `big` ran the suite's step on its other shard already (an earlier fold): the new one is the one named
    earlier = "      - run: pytest unit\n        if: matrix.gpu == 'mi300' && (success() || failure())\n"
    fold_before = FOLD_BEFORE.replace("      - run: pytest big\n", "      - run: pytest big\n" + earlier)
    fold_after = FOLD_AFTER.replace("      - run: pytest big\n", "      - run: pytest big\n" + earlier)
    assert approve.folded_into(parse_workflow(fold_before, "ci.yml"), parse_workflow(fold_after, "ci.yml"), "unit") \
        == ("big", (("gpu", "it's"),))
    # a `shell:` a schema would refuse (a mapping), in any job: the steps are still compared
    odd = "      - run: pytest other\n        shell: {bash: 1}\n"
    assert approve.folded_into(parse_workflow(FOLD_BEFORE.replace("      - run: pytest other\n", odd), "ci.yml"),
                               parse_workflow(FOLD_AFTER.replace("      - run: pytest other\n", odd), "ci.yml"),
                               "unit") == ("big", (("gpu", "it's"),))
    twice = FOLD_AFTER.replace("      - run: pytest other\n", "      - run: pytest other\n      - run: pytest unit\n")
    assert approve.folded_into(before, parse_workflow(twice, "ci.yml"), "unit") is None
    [gone] = approve.required_checks_gone({"ci.yml": FOLD_BEFORE}, {"ci.yml": twice}, {"unit": ["ruleset 3"]})
    assert gone.line() == ("- `unit` (ruleset 3): `unit` (the patch folds it away): require the check of the job its "
                           "tests now run in (`ci.yml`)")


def test_the_required_checks_note_is_bounded_and_says_what_was_not_read() -> None:
    from bot.github import GitHubError
    gone = [approve.GoneCheck(f"t ({n})", ("ruleset 3",), "t", "ci.yml", (("part", str(n)),)) for n in range(400)]
    note = approve.required_note("main", gone, [], 400)
    assert note.count("\n- ") == approve.NAMED + 1 and note.endswith("\n- and 380 more") and len(note) < 5_000
    assert approve.required_reply("main", gone, []).startswith(
        " Before merging it: `main` requires `t (0)` (ruleset 3), `t (1)` (ruleset 3), `t (2)` (ruleset 3), `t (3)` "
        "(ruleset 3), `t (4)` (ruleset 3) and 395 more, which no job of the lane files")
    cut = GitHubError(0, "connection failed: ServerDisconnectedError('Server disconnected')", "GET", "/x")
    _, unread = approve.read_required({"protected": False}, cut)
    assert approve.required_note("main", [], unread, 0) == (
        "**Required checks:** `main` requires none in its branch protection.\n\nfoldbot could not read `main`'s rulesets "
        "(no answer from GitHub): make sure no required check is one of a job the patch folds away or of a shard it "
        "trims.")
    assert approve.required_note("main", [], [], 0) == "**Required checks:** `main` requires none."
    assert approve.required_reply("main", gone[:1], unread) == (
        " Before merging it: `main` requires `t (0)` (ruleset 3), which no job of the lane files gives once it is merged. "
        "foldbot could not read `main`'s rulesets (no answer from GitHub): make sure none of the others goes with this "
        "patch.")


def test_a_required_check_is_a_combination_the_matrix_really_makes() -> None:
    """A job without a matrix gives `t`, not `t (linux)`; a combination `exclude` takes away is
    no check the patch removes; a value `include` adds is one, when the patch takes it out."""
    plain = "on: push\njobs:\n  t:\n    runs-on: linux-mi300-gpu-1\n    steps:\n      - run: pytest\n"
    gone = {"ci.yml": plain.replace("  t:\n", "  u:\n")}
    assert [g.check for g in approve.required_checks_gone({"ci.yml": plain}, gone, {
        "t": ["branch protection"], "t (linux)": ["branch protection"]})] == ["t"]
    matrix = MATRIX.replace("        flag: [true, false]\n", "        part: [0, 1, 2]\n        exclude:\n"
                            "          - part: 2\n        include:\n          - part: 3\n")
    trimmed = {"ci.yml": matrix.replace("[0, 1, 2]", "[0, 1]").replace("          - part: 3\n", "          - part: 4\n")}
    assert [g.check for g in approve.required_checks_gone({"ci.yml": matrix}, trimmed, {
        f"t ({n})": ["ruleset 3"] for n in range(5)})] == ["t (3)"]


def test_what_a_branch_requires_is_read_from_githubs_answers() -> None:
    """GitHub's answers as its REST reference shows them (the unprotected branch is its own
    example, ../shared/fixtures/github/rest/examples/repos.get-branch.200.json)."""
    import json
    from bot.github import GitHubError
    from tests.paths import FIXTURES
    example = json.loads((FIXTURES / "github" / "rest" / "examples" / "repos.get-branch.200.json").read_text())
    assert approve.read_required(example, []) == ({}, [])
    protected = {**example, "protected": True, "protection": {"enabled": True, "required_status_checks": {
        "enforcement_level": "non_admins", "contexts": ["ci-test", "linter"],
        "checks": [{"context": "ci-test", "app_id": None}, {"context": "build", "app_id": 15368}]}}}
    rules = [{"type": "pull_request", "parameters": {}, "ruleset_id": 5},
             {"type": "required_status_checks", "ruleset_source_type": "Repository", "ruleset_source": "o/r",
              "ruleset_id": 42, "parameters": {"strict_required_status_checks_policy": True,
                                              "required_status_checks": [{"context": "linter"}, {"context": "e2e"}]}},
             {"type": "required_status_checks", "ruleset_source_type": "Organization", "ruleset_source": "o",
              "ruleset_id": 7, "parameters": {"required_status_checks": [{"context": "e2e", "integration_id": 1}]}}]
    assert approve.read_required(protected, rules) == ({
        "ci-test": ["branch protection"], "linter": ["branch protection", "ruleset 42"], "build": ["branch protection"],
        "e2e": ["ruleset 42", "ruleset 7 of the organization o"]}, [])
    off = {**protected, "protection": {"required_status_checks": {"enforcement_level": "off", "contexts": ["x"]}}}
    assert approve.read_required(off, []) == ({}, [])
    hidden = {**protected, "protection": {"enabled": True}}  # protected, its required checks not shown
    assert approve.read_required(hidden, GitHubError(404, "Not Found", "GET", "/x")) == (
        {}, [("branch protection", "GitHub did not show its required checks")])
    odd = {**protected, "protection": {"required_status_checks": {"contexts": "ci-test"}}}  # not a list
    assert approve.read_required(odd, [{"type": "required_status_checks", "parameters": None}, "x"]) == (
        {}, [("branch protection", "GitHub did not show its required checks")])
