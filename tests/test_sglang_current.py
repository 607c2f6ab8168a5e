"""foldbot on SGLang's current AMD lanes, with a generated history whose logs are in the
format SGLang's runners print (tests/sglang_current.py).

What a maintainer relies on: every GPU job of the lane is in the table (mi300 and mi35x
runners alike); the 14-shard 1-GPU matrix is resharded to the count the per-file times
allow (7: the files' measured times, and the runner's time between them), the partition flag and the `wait-for-stage-b`
gate's `expected_count` following, in both lanes; the wall-clock change is stated through
max-parallel waves; a matrix that already runs into its timeout is flagged, not trimmed;
and what could not be measured is said.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from bot.analysis import Analysis, analyze
from bot.config import RepoConfig
from bot.logs import normal_path, parse_log
from bot.report import to_json, to_markdown
from bot.verify import check_patch
from tests.paths import AMD, ROCM720
from tests.sglang_current import LANES, auto_partition, estimates, gpu_jobs, history, workflow_text

SMALL = "stage-b-test-1-gpu-small-amd"
OVERRUN = "stage-c-test-large-8-gpu-amd-mi35x"


def _files() -> dict[str, str]:
    return {LANES[lane][0]: workflow_text(lane) for lane in LANES}


@pytest.fixture(scope="module", params=["rocm720", "amd"])
def lane(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[dict[str, Any]], dict[int, str]]]:
    return {name: history(name) for name in LANES}


@pytest.fixture(scope="module")
def analyses(runs: dict[str, tuple[list[dict[str, Any]], dict[int, str]]]) -> dict[str, Analysis]:
    return {name: analyze(_files(), bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()})
            for name, (bundles, logs) in runs.items()}


def _suffix(lane: str) -> str:
    return "-rocm720" if lane == "rocm720" else ""


def test_every_gpu_job_of_the_lane_is_in_the_table(analyses: dict[str, Analysis], lane: str) -> None:
    expected = gpu_jobs(workflow_text(lane))  # read with plain YAML, not with foldbot
    table = to_json(analyses[lane])["jobs"]
    assert [j["name"] for j in table] == [g.name for g in expected]
    assert {j["workflow_job"] for j in table} == {g.job_id for g in expected}
    assert all(j["setup_seconds"] > 0 and j["test_seconds"] > 0 for j in table)
    # mi35x runners (`runs-on: ${{matrix.runner}}`) count as AMD like the mi300 ones.
    assert {g.label for g in expected} >= {"linux-mi35x-gpu-1", "linux-mi35x-gpu-8", "linux-mi35x-gpu-8.fabric"}


def test_the_lanes_hold_34_gpu_jobs() -> None:
    counts = {lane: len({g.job_id for g in gpu_jobs(workflow_text(lane))}) for lane in LANES}
    assert counts == {"rocm720": 18, "amd": 16}


def test_the_generated_logs_are_sglangs_format_and_read_back(runs: dict[str, Any]) -> None:
    bundles, logs = runs["rocm720"]
    names = {j["id"]: j["name"] for b in bundles for j in b["jobs"]}
    shard = next(i for i, n in names.items() if n == "stage-b-test-1-gpu-small-amd-rocm720 (linux-mi300-1gpu-sglang, 3)"
                 and i in logs and i // 1000 == bundles[0]["workflow_run"]["id"])
    text = logs[shard]
    assert re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z 4/14 \(0-based id=3\)", text, re.M) or \
        "partition: 4/14 (0-based id=3)" in text
    assert "  - /sglang-checkout/test/registered/" in text and "========== TIMINGS BEGIN ==========" in text
    planned = [f for f, _ in auto_partition(estimates()[SMALL], 3, 14)]
    parsed = parse_log(text)
    assert list(parsed.measured) == planned
    assert set(parsed.estimates) == set(planned)
    # A retried file counts as the runner counts it: its last attempt, from the TIMINGS block.
    retried = [(i, t) for i, t in logs.items() if "[CI Retry] Attempt 2/2" in t]
    assert retried, "the history has retries"
    job_id, text = retried[0]
    file = re.search(r"\[CI Retry\] Attempt 2/2 for (\S+)", text)[1]
    timing = next(json.loads(line.split("Z ", 1)[1]) for line in text.splitlines()
                  if f'"file": "{file}"' in line)
    assert parse_log(text).measured[normal_path(file)] == timing["elapsed"]


@pytest.mark.parametrize("measured_lane", ["rocm720", "amd"])
def test_the_1_gpu_matrix_goes_from_14_to_7_shards_in_both_lanes(analyses: dict[str, Analysis],
                                                                 measured_lane: str) -> None:
    analysis = analyses[measured_lane]
    reshards = {r.job: r for r in analysis.plan.reshards}
    small = reshards[SMALL + _suffix(measured_lane)]
    assert (small.from_count, small.to_count, small.flag, small.estimate, small.log_runs) == \
        (14, 7, "--auto-partition-size", "per-file logs", 4)
    for lane, path in (("rocm720", ROCM720), ("amd", AMD)):
        after = yaml.safe_load(next(e for e in analysis.edits if e.path == path).after)["jobs"]
        job = after[SMALL + _suffix(lane)]
        assert job["strategy"]["matrix"]["part"] == [0, 1, 2, 3, 4, 5, 6]
        run = next(s["run"] for s in job["steps"] if "run_suite.py" in str(s.get("run")))
        assert "--auto-partition-id ${{ matrix.part }} --auto-partition-size 7 --timeout-per-file 2400" in run
        gate = after[f"wait-for-stage-b-amd{_suffix(lane)}"]
        entries = json.loads(next(s["with"]["jobs"] for s in gate["steps"] if "with" in s and "jobs" in s["with"]))
        assert {e["prefix"]: e["expected_count"] for e in entries}[SMALL + _suffix(lane)] == 7
    checks = check_patch(analysis.patch, analysis.edits, _files())  # raises on a patch that does not apply or validate
    assert (checks.git_apply, checks.schema) == (True, True)


@pytest.mark.parametrize("measured_lane", ["rocm720", "amd"])
def test_the_jit_kernel_unit_suite_folds_into_the_jit_kernel_benchmark_job_in_both_lanes(
        analyses: dict[str, Analysis], measured_lane: str) -> None:
    """Two standalone jobs of the same runners, stage, gate (`jit_kernel`) and setup, with ~5
    min of tests each behind ~2 h of setup: the shorter moves into the other as a step."""
    analysis = analyses[measured_lane]
    suffix = _suffix(measured_lane)
    assert [(f.job, f.into, f.shard_key) for f in analysis.plan.folds] == [
        ("jit-kernel-unit-test-amd" + suffix, "jit-kernel-benchmark-test-amd" + suffix, None)]
    for lane, path in (("rocm720", ROCM720), ("amd", AMD)):
        data = yaml.safe_load(next(e for e in analysis.edits if e.path == path).after)
        jobs, unit = data["jobs"], "jit-kernel-unit-test-amd" + _suffix(lane)
        assert unit not in jobs
        steps = jobs["jit-kernel-benchmark-test-amd" + _suffix(lane)]["steps"]
        assert [s["name"] for s in steps[-2:]] == ["Run JIT kernel benchmarks", "Run JIT kernel unit tests"]
        fold = analysis.plan.folds[0]  # 3 x the p90 of ~5 min, rounded up to 5 min: below its own 30
        assert (steps[-1]["if"], steps[-1]["timeout-minutes"]) == ("success() || failure()", fold.timeout_minutes)
        assert fold.timeout_minutes in (15, 20)
        assert "--suite jit-kernel-unit-test-amd " in steps[-1]["run"]
        finish = "pr-test-amd-rocm720-finish" if lane == "rocm720" else "pr-test-amd-finish"
        assert unit not in jobs[finish]["needs"] and "jit-kernel-benchmark-test-amd" + _suffix(lane) in jobs[finish]["needs"]
        options = data[True]["workflow_dispatch"]["inputs"]["target_stage_select"]["options"]
        assert unit not in options and "jit-kernel-benchmark-test-amd" + _suffix(lane) in options
    reasons = {f.job: f.reason for f in analysis.plan.findings}
    assert "jit-kernel-benchmark-test-amd" + suffix not in reasons  # it takes the suite, and is not folded itself
    # stage-a runs on `main_package` too: another gate, so it stays a job of its own
    groups = dict(part.rsplit(": ", 1)[::-1] for part in
                  reasons["stage-a-test-1-gpu-small-amd" + suffix].split(" (", 1)[1][:-1].split("; "))
    assert groups["gated by a different `if:`"] == \
        f"`sgl-kernel-unit-test-amd{suffix}`, `jit-kernel-benchmark-test-amd{suffix}`, `multimodal-gen-test-1-gpu-amd{suffix}`"


def test_a_reshard_carried_where_its_waves_make_it_later_says_so(analyses: dict[str, Analysis]) -> None:
    """rocm720 runs the 1-GPU matrix 4 shards at a time (599 -> 330 min on 7 shards); pr-test-amd.yml
    runs them all at once, where 7 longer shards finish later (on rocm720's times). The patch cuts
    both lanes alike, as SGLang's maintainers do, and the report said only "the lane gets faster"."""
    analysis = analyses["rocm720"]
    small = next(r for r in analysis.plan.reshards if r.job == SMALL + "-rocm720")
    before, after = small.wall_with(None)
    assert after - before >= 60
    (wall,) = next(result for result in analysis.lanes if result.lane.path == AMD).walls
    assert (wall.job, wall.measured_job, wall.max_parallel, wall.before_s, wall.after_s) == \
        (SMALL, SMALL + "-rocm720", None, before, after)
    text = to_markdown(analysis)
    assert f"it would make 1 job finish later (`{SMALL}` in `{AMD}` +" in text
    assert (f"In `{AMD}` (no max-parallel: its shards run at once) `{SMALL}` finishes **later**: {before / 60:.0f} "
            f"\u2192 {after / 60:.0f} min on these times.") in text
    # the fold alone slows no job, and is offered alone
    fold = next(s for s in analysis.suggestions if s.kind == "fold")
    assert f"or only what slows no job: `/fold approve {fold.patch_id}`" in text


def test_the_wall_clock_change_is_stated_through_waves(analyses: dict[str, Analysis]) -> None:
    analysis = analyses["rocm720"]
    small = next(r for r in analysis.plan.reshards if r.job == SMALL + "-rocm720")
    assert (small.max_parallel, small.waves_before, small.waves_after) == (4, 4, 2)
    assert small.wall_after_s < small.wall_before_s
    text = to_markdown(analysis)
    assert "with max-parallel 4, 14 shards run in 4 waves and 7 in 2 waves" in text
    before, after = round(small.wall_before_s / 60), round(small.wall_after_s / 60)
    assert f"**faster** wall clock ({before} → {after} min" in text
    # pr-test-amd.yml has no max-parallel on this matrix: one wave either way, so the
    # longer shards make the lane slower, and the report says so.
    plain = next(r for r in analyses["amd"].plan.reshards if r.job == SMALL)
    assert (plain.max_parallel, plain.waves_before, plain.waves_after) == (None, 1, 1)
    assert "**slower** wall clock" in to_markdown(analyses["amd"])


def test_a_matrix_already_past_its_timeout_is_flagged_not_trimmed(analyses: dict[str, Analysis], lane: str) -> None:
    analysis = analyses[lane]
    job = OVERRUN + _suffix(lane)
    assert job in analysis.plan.overruns
    assert job not in {r.job for r in analysis.plan.reshards}
    text = to_markdown(analysis)
    assert "**Already over time**" in text
    assert re.search(rf"`{job}` already overruns: in 4 of 4 runs a shard ran into the 60-min timeout", text)


def test_a_file_cut_off_by_the_timeout_alone_is_named_and_no_shard_count_is_offered(
        analyses: dict[str, Analysis], lane: str) -> None:
    """Shard 0 of the 8-GPU mi35x matrix holds one file, estimated at 80 min, that the 60-min
    `Run test` timeout cuts off in every run. No count of shards fits it, so none is offered
    ("about 5 shards" was), and its logs, all read, are not said to be missing."""
    job = OVERRUN + _suffix(lane)
    file = "test/registered/amd/perf/mi35x/test_qwen35_fp8_ar_fusion_mi35x.py"
    assert [f.reason for f in analyses[lane].plan.findings if f.job == job] == [
        "already overruns: in 4 of 4 runs a shard ran into the 60-min timeout of `Run test` (longest 60 min); it needs "
        "a longer timeout, not fewer shards; no shard count keeps the longest within 36 min, as one file alone runs "
        f"longer: `{file}` ran 60 min and had not ended when its step stopped (in 4 runs; the runner estimates it at "
        "80 min); raise `Run test`'s `timeout-minutes` or split that file"]
    unmeasured = {u["subject"]: u for u in to_json(analyses[lane])["unmeasured"]}
    assert unmeasured[job] == {
        "subject": job,
        "reason": "its logs were read, but a test file had not ended when its step stopped (the step's timeout, or a "
                  f"cancel): `{file}` (in 4 runs, after 60 min or more); a run with such a file has no whole per-file "
                  "times, so its shard times stand in, and they stop where the file was cut off",
        "fix": "give that file the time it needs: raise the test step's `timeout-minutes`, or split the file; the runs "
               "after that are read file by file"}


def test_todays_count_is_never_predicted_below_what_it_was_measured_to_take(runs: dict[str, Any]) -> None:
    """rocm720's 1-GPU large matrix: its longest of 3 shards took 39.2, 31.0, 31.3 and 31.3 min (p90
    36.9, over the 36-min limit). The per-file prediction for 3 shards, the files' times with the
    step's remainder shared out evenly, came to 33.5 min, so the report said "3 shards are needed"
    where the App, with a run of shard times, said they already run over."""
    bundles, logs = runs["rocm720"]
    analysis = analyze(_files(), bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()})
    job = "stage-b-test-1-gpu-large-amd-rocm720"
    assert [f.reason for f in analysis.plan.findings if f.job == job] == [
        "no fewer shards: today's 3 already run 37 min at p90 (limit 36 min = 60% of 60; per-file logs); about 4 "
        "would keep the longest within the limit"]


def test_what_could_not_be_measured_is_said(analyses: dict[str, Analysis], lane: str) -> None:
    unmeasured = {u["subject"]: u for u in to_json(analyses[lane])["unmeasured"]}
    # The multimodal-gen runner prints no per-file times foldbot reads: its matrices rest on shard times.
    for job in ("multimodal-gen-test-1-gpu-amd", "multimodal-gen-test-2-gpu-amd"):
        line = unmeasured[job + _suffix(lane)]
        assert line["reason"].startswith("no per-file test times read from its logs")
        assert "--logs JOB_ID=FILE" in line["fix"]
    # Matrices whose logs were read are not listed.
    assert SMALL + _suffix(lane) not in unmeasured
    assert "stage-b-test-1-gpu-large-amd" + _suffix(lane) not in unmeasured


def test_without_logs_the_shard_times_give_less_and_the_report_says_why(runs: dict[str, Any]) -> None:
    bundles, _ = runs["rocm720"]
    analysis = analyze(_files(), bundles, RepoConfig())
    small = next(r for r in analysis.plan.reshards if r.job == SMALL + "-rocm720")
    assert small.estimate == "shard times" and small.to_count > 6
    unmeasured = {u["subject"]: u["reason"] for u in to_json(analysis)["unmeasured"]}
    assert unmeasured[SMALL + "-rocm720"].startswith("no per-file test times read from its logs")


def _small_shards(bundle: dict[str, Any]) -> dict[int, int]:
    """The 1-GPU small matrix's jobs of a run: shard (its name's last value) -> API job id."""
    return {int(j["name"].rsplit(", ", 1)[1].rstrip(")")): j["id"] for j in bundle["jobs"]
            if j["name"].startswith(SMALL + "-rocm720 (")}


@pytest.mark.parametrize("slip", ["copied", "swapped", "other_count", "other_suite"])
def test_a_log_given_for_another_shards_job_is_not_used_and_the_report_says_so(runs: dict[str, Any], slip: str) -> None:
    """A `--logs JOB_ID=FILE` slip: shard 0's log given for shard 1's job too, or two shards'
    logs swapped, or a log of a run on another shard count. Each log's header says which shard
    it is of (`partition: 1/14 (0-based id=0)`) and was not checked: a copied log counted shard
    0's files twice (the reshard became "14 shards are needed: 13 would run 52 min") and a swapped
    pair went unseen. The run's logs are not used (its shard times stand in), and the report
    names the jobs and the header."""
    bundles, logs = runs["rocm720"]
    given = {k: parse_log(v) for k, v in logs.items()}
    bundle = bundles[-1]
    shards = _small_shards(bundle)
    if slip == "copied":
        given[shards[1]] = given[shards[0]]
        expected = f"job {shards[1]} (`part: 1`) has the log of shard 0 (its header: `1/14 (0-based id=0)`)"
    elif slip == "swapped":
        given[shards[1]], given[shards[2]] = given[shards[2]], given[shards[1]]
        expected = (f"job {shards[1]} (`part: 1`) has the log of shard 2 (its header: `3/14 (0-based id=2)`); "
                    f"job {shards[2]} (`part: 2`) has the log of shard 1 (its header: `2/14 (0-based id=1)`)")
    elif slip == "other_suite":  # (another matrix's logs, of as many shards: job ids copied from the wrong rows)
        given[shards[3]] = parse_log(logs[shards[3]].replace("Suite: stage-b-test-1-gpu-small-amd,",
                                                             "Suite: stage-b-test-1-gpu-large-amd,"))
        expected = (f"job {shards[3]}'s log is of the suite `stage-b-test-1-gpu-large-amd` (its header), not "
                    "`stage-b-test-1-gpu-small-amd`")
    else:
        given[shards[3]] = parse_log(logs[shards[3]].replace("partition: 4/14 (0-based id=3)",
                                                             "partition: 4/15 (0-based id=3)"))
        assert given[shards[3]].shard == (3, 15)
        expected = f"job {shards[3]}'s log is of a run on 15 shards (its header: `4/15 (0-based id=3)`), not 14"
    analysis = analyze(_files(), bundles, RepoConfig(), given)
    small = next(r for r in analysis.plan.reshards if r.job == SMALL + "-rocm720")
    # as if that run's logs were not given: its shard times stand in; the other runs' logs still count
    without = analyze(_files(), bundles, RepoConfig(), {k: v for k, v in given.items() if k not in shards.values()})
    alike = next(r for r in without.plan.reshards if r.job == SMALL + "-rocm720")
    assert (small.to_count, small.log_runs, small.predicted_longest_p90_s) == \
        (alike.to_count, len(bundles) - 1, alike.predicted_longest_p90_s)
    unmeasured = {u["subject"]: u for u in to_json(analysis)["unmeasured"]}
    assert unmeasured[SMALL + "-rocm720"] == {
        "subject": SMALL + "-rocm720",
        "reason": f"shard logs that are not their job's, by their header: {expected}; those runs' per-file times are not "
                  "used, so shard times stand in",
        "fix": "give each job its own shard's log (`--logs JOB_ID=FILE`: the `id` of the job whose name carries that "
               "shard, of this matrix: a log of another suite is another matrix's job's); if they are the jobs' own "
               "logs, the test command's partition id (or `--suite`) is not the matrix's"}


def test_a_shard_log_holding_nothing_is_no_shards_times(runs: dict[str, Any]) -> None:
    """The newest run's shard 0 log holds nothing foldbot reads (an empty body, a runner that died
    before it printed): counted as read, the run's per-file times lacked that shard's files, spread
    its time over the others' and predicted a count that file alone would not fit. That run is now
    as if its logs were partly given: its shard times stand in, and the report says so."""
    bundles, logs = runs["rocm720"]
    given = {k: parse_log(v) for k, v in logs.items()}
    shards = _small_shards(bundles[-1])
    given[shards[0]] = parse_log("")
    analysis = analyze(_files(), bundles, RepoConfig(), given)
    small = next(r for r in analysis.plan.reshards if r.job == SMALL + "-rocm720")
    assert (small.log_runs, small.estimate) == (3, "per-file logs (3 runs) and shard times (1 run)")
    assert analysis.plan.partial_logs[SMALL + "-rocm720"] == ("13 of 14",)


def test_a_matrix_no_count_keeps_within_the_limit_is_not_said_to_need_its_count(runs: dict[str, Any]) -> None:
    """With `reshard: {safety: 0.3}` (22 of the 75-min step) even today's 14 shards run 26 min at
    p90: one test file (`test_torch_compile_moe.py`, ~23 min) is longer than the limit alone. The
    finding said "14 shards are needed: 13 would run 26 min", read as "14 is the fewest that fits"."""
    bundles, logs = runs["rocm720"]
    analysis = analyze(_files(), bundles, RepoConfig(reshard_safety=0.3), {k: parse_log(v) for k, v in logs.items()})
    assert [f.reason for f in analysis.plan.findings if f.job == SMALL + "-rocm720"] == [
        "no fewer shards: today's 14 already run 26 min at p90 (limit 22 min = 30% of 75; per-file logs); no count "
        "up to 42 keeps the longest within it: a test file may take longer alone"]
    assert not [r for r in analysis.plan.reshards if r.job == SMALL + "-rocm720"]


def test_a_provisional_suggestion_stays_in_its_lane() -> None:
    """One run of pr-test-amd.yml: its suggestions rest on fewer than `min_samples` runs. They were
    carried into pr-test-amd-rocm720.yml too, whose own runs (not read) may say otherwise: one such
    run cut rocm720's 2-shard matrix to 1, which rocm720's four runs said runs over its limit. They
    stay in the measured lane, and the report says why each is not carried."""
    bundles, logs = history("amd", runs=1)
    analysis = analyze(_files(), bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()})
    assert analysis.plan.folds or analysis.plan.reshards
    assert all(s.provisional for s in (*analysis.plan.folds, *analysis.plan.reshards))
    assert [e.path for e in analysis.edits] == [AMD]
    carried = [w for w in analysis.warnings if w.startswith(ROCM720)]
    assert carried and all(w.endswith(f"rests on fewer than 3 runs of {AMD} (provisional)") for w in carried)
    assert len(carried) == len(analysis.plan.folds) + len(analysis.plan.reshards)
