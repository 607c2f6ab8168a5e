"""Report text: names from jobs and steps cannot mention, inject HTML or forge markers."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.publish import read_state
from bot.report import MARKER, _chart, md_escape, to_json, to_markdown
from tests.builders import PYTORCH_ROCM_MI300, Step, amd_job, bundle, job as api_job, skipped_job
from tests.sglang_history import rocm720_history


def test_hostile_job_names_are_inert(sglang_before: dict[str, str]) -> None:
    bundles = rocm720_history()
    evil = "x @octocat <img src=x onerror=alert(1)> <!-- foldbot:report --> [link](http://e) | `code` *b*"
    unit = next(j for j in bundles[-1]["jobs"] if j["name"].startswith("multimodal-gen-unit-test"))
    unit["name"] = evil
    unit["labels"] = ["linux-mi300-1gpu-sglang"]
    body = to_markdown(analyze(sglang_before, bundles, RepoConfig()), state={"x": "--> <!--"})
    assert body.count(MARKER) == 1 and body.startswith(MARKER)
    assert "@octocat" not in body and "@\u200boctocat" in body
    assert "<img" not in body and "&lt;img" in body
    assert "[link](http://e)" not in body
    assert body.count("<!--") == 2  # the marker and the state block, nothing else
    assert read_state(body) == {"x": "--> <!--"}


def test_md_escape() -> None:
    assert md_escape("a|b <c> @d & e") == "a\\|b &lt;c&gt; @\u200bd &amp; e"


def test_provisional_says_the_configured_min_samples(sglang_before: dict[str, str]) -> None:
    bundles = rocm720_history()[:4]
    body = to_markdown(analyze(sglang_before, bundles, RepoConfig(min_samples=6)))
    assert "*(provisional: fewer than 6 runs)*" in body and "fewer than 3 runs" not in body
    assert "*(provisional" not in to_markdown(analyze(sglang_before, bundles, RepoConfig(min_samples=4)))


def test_reasons_keep_their_code_spans_and_stay_inert() -> None:
    from bot.report import md_text

    assert md_text("set `logs: {fetch: true}` in x_y") == "set `logs: {fetch: true}` in x\\_y"
    assert md_text("job `a @b` and <c>") == "job `a @\u200bb` and &lt;c&gt;"
    assert md_text("odd ` tick *x*") == "odd \\` tick \\*x\\*"


def _inert(rendered: str) -> bool:
    """Read as CommonMark reads inline text: outside code spans a backslash escapes the
    next character; a single backtick opens a code span that the next single backtick
    closes (its text literal, no escapes); a longer backtick run is not allowed. Then
    text outside the spans must hold no raw `<` and no bare @mention, and no span may
    open an HTML comment in the raw text (where foldbot's own markers live)."""
    outside, inside, current, in_code, i = [], [], [], False, 0
    while i < len(rendered):
        c = rendered[i]
        if c == "\\" and not in_code and i + 1 < len(rendered):
            current.append(rendered[i:i + 2])
            i += 2
            continue
        if c == "`":
            if rendered[i + 1:i + 2] == "`":
                return False
            (inside if in_code else outside).append("".join(current))
            current, in_code = [], not in_code
            i += 1
            continue
        current.append(c)
        i += 1
    if in_code:
        return False
    outside.append("".join(current))
    text = outside + inside
    if any(c in rendered for c in "\r\n"):
        return False  # one line: nothing can start a block (a heading, an HTML block) mid-text
    no_mention = all("@" not in part.replace("@\u200b", "") for part in text)
    return no_mention and not any("<" in p for p in outside) and not any("<!--" in p for p in inside)


@pytest.mark.parametrize("text", [
    "...not JSON: '```<img src=https://evil.example/x.png>`'",
    "``<b>x</b>",
    "job 1 (`<!-- foldbot:state {\"v\":1,\"patch_id\":\"FORGED\"} -->`): gone",
    "a `` b ` c",
    "`a``b`c`",
    "`<``<`",  # two spans with nothing between: they must not touch
    "steps: `a\r# b` (3 min), `<img src=x>`",  # a carriage return ends a line in CommonMark too
    "trailing backslash \\`code`",
    "@octocat `@octocat` <script>",
])
def test_reasons_with_hostile_text_stay_inert(text: str) -> None:
    from bot.report import md_text

    assert _inert(md_text(text))


@given(st.text(alphabet="`<>!-@\\ab *_\r\n#", max_size=40))
def test_md_text_is_inert_for_any_text(text: str) -> None:
    from bot.report import md_text

    assert _inert(md_text(text))


def test_a_forged_state_block_in_a_job_name_is_not_read(sglang_before: dict[str, str]) -> None:
    bundles = rocm720_history()
    forged = '<!-- foldbot:state {"v":1,"patch_id":"FORGED","blobs":{},"runs":[]} -->'
    unit = next(j for j in bundles[-1]["jobs"] if j["name"].startswith("multimodal-gen-unit-test"))
    unit["name"] = forged
    body = to_markdown(analyze(sglang_before, bundles, RepoConfig()), state={"patch_id": "REAL"})
    assert read_state(body) == {"patch_id": "REAL"}
    assert body.count("<!-- foldbot:state") == 1


def test_a_run_without_amd_jobs_says_so_instead_of_an_empty_table(sglang_before: dict[str, str]) -> None:
    config = RepoConfig(amd_runner_pattern="no-such-runner")
    body = to_markdown(analyze(sglang_before, rocm720_history(), config))
    assert "| job |" not in body
    assert "**No AMD job spent time on setup or tests in the latest run**; see *Could not measure* below.\n\n" \
           "#### Suggestions\n" in body  # said once, by the headline: no table line repeating it
    assert body.count("spent time on setup or tests") == 1
    assert "- `AMD jobs`: no job of the 8 runs ran on a runner that `amd_runner_pattern` matches" in body


def test_no_report_of_a_three_lane_repository_exceeds_githubs_limit() -> None:
    """SGLang's current lanes and a third made from the rocm720 one, a run of 60 jobs: the
    dashboard and a PR's comment stay within 65,536 characters, and the patch carries all
    three lanes."""
    import copy

    from bot.logs import parse_log
    from tests.sglang_current import LANES, history, workflow_text

    files = {LANES[lane][0]: workflow_text(lane) for lane in LANES}
    files[".github/workflows/pr-test-amd-rocm800.yml"] = workflow_text("rocm720").replace("rocm720", "rocm800")
    bundles, logs = history("rocm720")
    latest = bundles[-1]["jobs"]
    extra = [copy.deepcopy(j) for j in latest if "stage-b-test-1-gpu-small" in j["name"]][:60 - len(latest)]
    for i, job in enumerate(extra):
        job["id"], job["name"] = 99_000 + i, job["name"].replace("small", f"extra{i}")
    latest += extra
    analysis = analyze(files, bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()})
    assert len(analysis.lanes) == 3 and len(analysis.latest.jobs) == 60
    assert sorted(e.path for e in analysis.edits) == sorted(files)
    state = {"patch_id": analysis.patch_id, "pr": 1}
    dashboard = to_markdown(analysis, state=state)
    comment = to_markdown(analysis, state=state, dashboard="https://github.com/o/r/issues/1")
    assert len(dashboard) <= 65536 and len(comment) <= 65536
    assert read_state(dashboard) == state == read_state(comment)
    assert dashboard.count("The same change in") == 2


def test_the_patch_says_what_it_changes_per_file(sglang_before: dict[str, str]) -> None:
    body = to_markdown(analyze(sglang_before, rocm720_history(), RepoConfig()))
    changes = body.split("**What the patch changes**\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert changes == [
        "- `.github/workflows/pr-test-amd-rocm720.yml`: `multimodal-gen-unit-test-amd-rocm720` moves into shard "
        "part=0 of `multimodal-gen-test-1-gpu-amd-rocm720` as a step (timeout 20 min); its job goes, and with it "
        "from `needs:` and the dispatch options; `multimodal-gen-test-2-gpu-amd-rocm720` runs 2 shards instead of 3 "
        "(`--total-partitions` 2, and any `wait-for-*` count of its jobs).",
        "- `.github/workflows/pr-test-amd.yml`: `multimodal-gen-unit-test-amd` moves into shard part=0 of "
        "`multimodal-gen-test-1-gpu-amd` as a step (timeout 20 min); its job goes, and with it from `needs:` and the "
        "dispatch options; `multimodal-gen-test-2-gpu-amd` runs 2 shards instead of 3 (`--total-partitions` 2, and any "
        "`wait-for-*` count of its jobs).",
    ]
    assert body.index("**What the patch changes**") < body.index("```diff")


def test_jobs_that_shorten_alike_keep_bars_and_labels_of_their_own() -> None:
    """Six shards of one test caller that map to no workflow job (pytorch's rocm-mi300.yml
    before its callers could be told apart) shorten to one label: each keeps its bar."""
    rows = [{"name": f"linux-focal-rocm6.3-py3.10 / test (default, {s}, 6, linux.rocm.gpu.mi300.2)",
             "workflow_job": None, "setup_seconds": 2400.0 + s * 60, "test_seconds": 6600.0} for s in range(1, 4)]
    rows.append({"name": "b", "workflow_job": "build-amd", "setup_seconds": 600.0, "test_seconds": 0.0})
    chart = _chart(rows)
    assert chart[4] == ('    x-axis ["1.linux-focal-r..m.gpu.mi300.2", "2.linux-focal-r..m.gpu.mi300.2", '
                        '"3.linux-focal-r..m.gpu.mi300.2", "build-amd"]')
    assert chart[6] == "    bar [153, 152, 151, 10]"


def test_chart_labels_keep_the_lanes_suffix() -> None:
    """Without its lane's suffix, `unit-test-amd-rocm710` read `unit-test-amd`: the id of the other
    lane's job, which the report did not measure. A long id is cut in the middle, keeping it."""
    rows = [{"name": name, "workflow_job": name, "setup_seconds": 600.0 * k, "test_seconds": 60.0}
            for k, name in enumerate(("unit-test-amd-rocm710", "stage-b-test-1-gpu-small-amd-rocm720"), 1)]
    assert _chart(rows)[4] == '    x-axis ["stage-b-test-1..ll-amd-rocm720", "unit-test-amd-rocm710"]'




def test_tests_in_a_reusable_workflow_are_said_to_be_out_of_reach_not_all_clear() -> None:
    path = ".github/workflows/rocm-mi300.yml"
    runs = [bundle(run_id=9500 + k, repo="pytorch/pytorch", workflow_path=path, workflow_name="rocm-mi300",
                   head_sha=f"{k:040x}", start=datetime(2026, 8, 10 + k, tzinfo=timezone.utc), jobs=[
                       api_job("linux-focal-rocm6.3-py3.10 / build", [Step("Build", 70)], ["linux.2xlarge"]),
                       *[amd_job(f"linux-focal-rocm6.3-py3.10 / test (default, {s}, 2, linux.rocm.gpu.mi300.2)",
                                 labels=["linux.rocm.gpu.mi300.2"], setup_minutes=38, tests=[("Test", 8)])
                         for s in (1, 2)]]) for k in range(3)]
    analysis = analyze({path: PYTORCH_ROCM_MI300}, runs, RepoConfig())
    assert analysis.stats["linux-focal-rocm6_3-py3_10-test"].samples == 3
    assert ("Nothing to fold or reshard: `linux-focal-rocm6_3-py3_10-test`: its AMD jobs run the reusable workflow "
            "`./.github/workflows/_rocm-test.yml`, whose steps foldbot does not edit; how many shards they run is the "
            "list in `linux-focal-rocm6_3-py3_10-build`'s `test-matrix`, which this report measures per configuration.\n"
            ) in to_markdown(analysis)


def test_a_latest_run_that_skipped_jobs_says_so_by_its_headline(sglang_before: dict[str, str]) -> None:
    """SGLang's PR runs skip what `check-changes` gates off, and a `/dispatch` of one job skips the rest:
    the headline says how many AMD jobs the run skipped (named when few), so a table of 8 jobs is not
    read as the lane's; the JSON lists them."""
    from bot.report import to_json

    bundles = rocm720_history()
    gated = analyze(sglang_before, bundles, RepoConfig())
    assert "over 8 jobs.\nIt skipped 16 AMD jobs (a gate): the table shows the jobs it ran; the suggestions rest on " \
           "every run above.\n" in to_markdown(gated)
    assert len(to_json(gated)["skipped_jobs"]) == 16
    dispatched = bundles[-1]["jobs"]
    for spec in dispatched:  # a dispatch of the unit suite only: everything else skipped
        if spec["name"].startswith("multimodal-gen-test-"):
            spec.update(conclusion="skipped", steps=[], labels=[])
    bundles[-1]["workflow_run"] = {**bundles[-1]["workflow_run"], "event": "workflow_dispatch"}
    body = to_markdown(analyze(sglang_before, bundles, RepoConfig()))
    assert "over 1 job.\nIt skipped 18 AMD jobs (a dispatch of some jobs only): the table" in body
    bundles[-1]["jobs"] = [spec for spec in dispatched if spec["conclusion"] != "skipped"
                          or spec["name"].startswith(("multimodal-gen-test-", "stage-b-test-2"))]
    assert "over 1 job.\nIt skipped `multimodal-gen-test-1-gpu-amd-rocm720`, `multimodal-gen-test-2-gpu-amd-rocm720` and " \
           "`stage-b-test-2-gpu-large-amd-rocm720` (a dispatch" in \
        to_markdown(analyze(sglang_before, bundles, RepoConfig()))
    complete = [spec for spec in rocm720_history()[-1]["jobs"] if spec["conclusion"] != "skipped"]
    bundles[-1]["jobs"] = complete
    assert "It skipped" not in to_markdown(analyze(sglang_before, bundles, RepoConfig()))


def test_a_cancelled_latest_run_says_so_by_its_headline(sglang_before: dict[str, str]) -> None:
    """A run cancelled 100 min in, most jobs still in their ~2 h setup: the headline went from 80% to
    "97% of AMD runner time in the latest run was setup", with nothing saying the run was cut off."""
    bundles = rocm720_history()
    bundles[-1]["workflow_run"] = {**bundles[-1]["workflow_run"], "conclusion": "cancelled"}
    body = to_markdown(analyze(sglang_before, bundles, RepoConfig()))
    assert ("every run above.\nIt was **cancelled** (a newer run of its `concurrency` group replaced it, or someone "
            "cancelled it): its jobs stopped where they were, in setup or in their tests, so its shares are not the "
            "lane's; the suggestions rest on every run above, each job's only where it ran its tests.\n") in body
    bundles[-1]["workflow_run"] = {**bundles[-1]["workflow_run"], "conclusion": "success"}
    assert "It was **cancelled**" not in to_markdown(analyze(sglang_before, bundles, RepoConfig()))


def test_an_error_shown_on_the_dashboard_or_in_a_reply_is_cut_to_a_length_github_takes() -> None:
    """A file's own text can make an error any length (a 70 KB value, a job id): GitHub refused the
    dashboard and every reply (422), and the deliveries failed until they were set aside."""
    from bot.reporting import clipped, error_body

    body = error_body("o/r", "`x` is wrong: " + "y" * 70_000)
    assert len(body) < 2400 and "y" * 1986 + "\u2026 \\(cut: 70,014 characters in all\\)" in body
    assert clipped("short") == "short"


def test_the_dashboards_record_of_runs_reported_stays_bounded_however_many_lanes_came_and_went() -> None:
    """review96 f02: the record kept every lane ever reported (renamed lane files, dropped lanes), 20 runs each,
    until the state block alone passed GitHub's body limit and every dashboard write was refused (422)."""
    from bot.states import GONE_KEPT, REPORTED_KEPT, ReportState

    lanes = {".github/workflows/a.yml", ".github/workflows/b.yml"}
    reported = {path: tuple((1000 * i + n, 1) for n in range(REPORTED_KEPT)) for i, path in enumerate(sorted(lanes))}
    reported.update({f".github/workflows/old-{i:03d}.yml": tuple((10_000 + 100 * i + n, 1) for n in range(20))
                     for i in range(50)})
    state = ReportState(workflow=".github/workflows/a.yml", base_sha="", head_sha="", runs=(), blobs={},
                        reported=reported)
    kept = state.kept_for(lanes)
    assert {path: kept[path] for path in lanes} == {path: reported[path] for path in lanes}  # the lanes': all
    gone = {path: items for path, items in kept.items() if path not in lanes}
    assert len(gone) == GONE_KEPT  # of the paths no lane now, those reported last, their last completion each
    assert gone == {f".github/workflows/old-{i:03d}.yml": ((10_000 + 100 * i + 19, 1),) for i in range(40, 50)}



def test_a_path_no_lane_now_keeps_its_latest_run_not_the_one_recorded_last() -> None:
    """review97 f01: an error records a re-run of an older run after the lane's latest; cut to one, the path kept
    that re-run, and named a lane again, its latest run was reported twice."""
    from bot.states import ReportState

    state = ReportState(workflow="", base_sha="", head_sha="", runs=(), blobs={},
                        reported={".github/workflows/gone.yml": ((5, 1), (8, 1), (7, 2))})
    assert state.kept_for(set()) == {".github/workflows/gone.yml": ((8, 1),)}


# Modelled on ROCm/iris's iris-tests.yml (@07fb202e): an `include` list of test directories by GPU count, jobs that
# need it (skipped when one of its jobs fails), and a job only a schedule runs.
IRIS = ".github/workflows/iris-tests.yml"
IRIS_TESTS = """name: Iris Tests
on: [pull_request, schedule]
jobs:
  test-git:
    name: Test ${{ matrix.test_dir }} (${{ matrix.num_ranks }} ranks, git install)
    runs-on: [linux-mi350-8gpu]
    strategy:
      matrix:
        include:
          - {test_dir: examples, num_ranks: 1}
          - {test_dir: ccl, num_ranks: 8}
    steps:
      - name: Run tests
        run: pytest tests/${{ matrix.test_dir }}
  test-editable:
    needs: [test-git]
    name: Test editable
    runs-on: [linux-mi350-8gpu]
    steps:
      - name: Run tests
        run: pytest tests
  nightly:
    if: github.event_name == 'schedule'
    uses: ./.github/workflows/_benchmark-mi350.yml
"""


def _iris_run(number: int, *, ccl: str = "success", skipped: tuple[str, ...] = ()) -> dict:
    def tests(name: str, conclusion: str = "success") -> object:
        return api_job(name, [Step("Set up job", 0.1), Step("Start container", 20), Step("Run tests", 12, conclusion)],
                       ["linux-mi350-8gpu"], conclusion)
    jobs = [tests("Test examples (1 ranks, git install)"), tests("Test ccl (8 ranks, git install)", ccl),
            *([skipped_job("Test editable")] if "test-editable" in skipped else [tests("Test editable")]),
            *([skipped_job("nightly")] if "nightly" in skipped else
              [tests("nightly / Benchmark (mi350)")])]
    return bundle(run_id=700 + number, repo="ROCm/iris", workflow_path=IRIS, workflow_name="Iris Tests",
                  head_sha=f"{700 + number:040x}", jobs=jobs, start=datetime(2026, 9, 1 + number, tzinfo=timezone.utc))


def test_jobs_skipped_after_a_job_they_need_failed_are_not_said_gated() -> None:
    """review101 f02, f03: ROCm/iris's `test-editable` is skipped when a `test-git` job fails: the headline called it
    "(a gate)"; tritonbench's nightly caller (no `runs-on` of its own) measured in earlier runs and skipped by its
    `if:` was left out of `skipped_jobs` and the headline."""
    runs = [_iris_run(i) for i in range(3)] + [_iris_run(3, ccl="failure", skipped=("test-editable", "nightly"))]
    analysis = analyze({IRIS: IRIS_TESTS}, runs, RepoConfig())
    assert to_json(analysis)["skipped_jobs"] == ["nightly", "test-editable"]
    assert "It skipped `nightly` (a gate); `test-editable` (after `test-git` failed): the table shows the jobs it " \
           "ran" in to_markdown(analysis)
    # review101 f06: a list of test directories by GPU count is configurations of their own, not shard numbers
    (reason,) = [f.reason for f in analysis.plan.findings if f.job == "test-git"]
    assert reason == ("its matrix is an `include` list of 2 entries varying `test_dir` (examples, ccl): jobs of their "
                      "own, not shards of one suite; nothing to reshard, and a matrix's job is not folded")


def test_jobs_skipped_down_a_chain_of_needs_name_the_failure_or_cancel_that_began_it() -> None:
    """review104 f03: C needs B needs A; A failed, B and C were skipped: C was said gated. A needed job cancelled
    was said to have failed."""
    text = """name: ROCm
on: pull_request
jobs:
  build:
    runs-on: linux-mi300-gpu-1
    steps: [{name: Run tests, run: pytest a}]
  test:
    needs: build
    runs-on: linux-mi300-gpu-1
    steps: [{name: Run tests, run: pytest b}]
  bench:
    needs: test
    runs-on: linux-mi300-gpu-1
    steps: [{name: Run benchmark, run: python bench.py}]
"""
    def run(number: int, build: str) -> dict:
        steps = [Step("Set up job", 0.1), Step("Pull image", 20), Step("Run tests", 12, build)]
        jobs = [api_job("build", steps, ["linux-mi300-gpu-1"], build)]
        jobs += [api_job(name, [Step("Set up job", 0.1), Step("Pull image", 20), Step("Run tests", 12)],
                         ["linux-mi300-gpu-1"]) for name in ("test", "bench")] if build == "success" else \
            [skipped_job("test"), skipped_job("bench")]
        return bundle(run_id=800 + number, repo="o/r", workflow_path=".github/workflows/rocm.yml",
                      workflow_name="ROCm", head_sha=f"{800 + number:040x}", jobs=jobs,
                      start=datetime(2026, 9, 1 + number, tzinfo=timezone.utc))
    for build, said in (("failure", "`build` failed"), ("cancelled", "`build` was cancelled")):
        analysis = analyze({".github/workflows/rocm.yml": text}, [run(0, "success"), run(1, "success"), run(2, build)],
                           RepoConfig())
        assert f"It skipped `bench` and `test` (after {said}): the table shows" in to_markdown(analysis)
