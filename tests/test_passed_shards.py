"""Shard lists passed to a reusable workflow as a string another job writes: pytorch's ROCm
lanes (`rocm-mi300.yml`, `periodic-rocm-mi200.yml`, ...), where the build job's `with:
test-matrix` lists `{ config, shard, num_shards, runner }` entries and the test job hands it to
`_rocm-test.yml`. foldbot measures each configuration's shards; where the called job's timeout
allows fewer, its patch lowers `num_shards` in the list and drops the shards past it (the list
compared as the data it parses to); otherwise it says what the times allow."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.plan import PassedShards, ShardGroup, callee_timeout, called_values, passed_shards, shard_callees
from bot.report import to_json, to_markdown
from bot.workflow import WorkflowError, parse_workflow
from tests.builders import PYTORCH_ROCM_MI300, Step, amd_job, bundle, job as api_job, skipped_job
from tests.fakegithub import FakeGitHub
from tests.harness import INSTALLATION, Bot, World
from tests.test_app_workflow_run import dashboards

PATH = ".github/workflows/rocm-mi300.yml"
RUNNER = "linux.rocm.gpu.mi300.2"


def lane(entries: str, passed: str = "") -> str:
    """A pytorch-style lane: the build job writes `entries` into its `test-matrix`; the test job
    is passed it (and `passed`, more of its `with:`)."""
    return f"""name: rocm-mi300
on: push
jobs:
  build:
    name: linux-rocm
    uses: ./.github/workflows/_linux-build.yml
    with:
      test-matrix: |
        {{ include: [
{entries}
        ]}}
  test:
    name: linux-rocm
    uses: ./.github/workflows/_rocm-test.yml
    needs: build
    with:
      test-matrix: ${{{{ needs.build.outputs.test-matrix }}}}
{passed}"""


def entry(config: str, shard: int, count: int, runner: str = RUNNER) -> str:
    return f'          {{ config: "{config}", shard: {shard}, num_shards: {count}, runner: "{runner}" }},'


def entries(config: str, count: int, runner: str = RUNNER) -> str:
    return "\n".join(entry(config, s, count, runner) for s in range(1, count + 1))


def runs(test_minutes: dict[tuple[str, str], list[float]], count: int = 3, setup_minutes: float = 38) -> list[dict]:
    """`count` runs of the lane above: for each (config, runner), its shards' Test minutes."""
    return [bundle(run_id=9600 + k, repo="pytorch/pytorch", workflow_path=PATH, workflow_name="rocm-mi300",
                   head_sha=f"{k + 1:040x}", start=datetime(2026, 8, 10 + k, tzinfo=timezone.utc), jobs=[
                       api_job("linux-rocm / build", [Step("Build", 70)], ["linux.2xlarge"]),
                       *[amd_job(f"linux-rocm / test ({config}, {s}, {len(minutes)}, {runner})", labels=[runner],
                                 setup_minutes=setup_minutes, tests=[("Test", m)])
                         for (config, runner), minutes in test_minutes.items() for s, m in enumerate(minutes, 1)]])
            for k in range(count)]


def by_hand(text: str, history: list[dict]) -> list[str]:
    """What is said of the lists with no count foldbot sets."""
    analysis = analyze({PATH: text}, history, RepoConfig())
    assert not analysis.plan.lists
    assert analysis.plan.empty  # nothing foldbot edits itself
    return [f"{f.job}: {f.reason}" for f in analysis.plan.by_hand]


def trimmed(text: str, history: list[dict], **called: str) -> list[tuple[str, str, int, int, str]]:
    """The (caller, configuration, count, new count, what was measured) foldbot's patch makes."""
    analysis = analyze({PATH: text}, history, RepoConfig(), called=called.get("called") and {CALLEE: called["called"]})
    assert analysis.patch
    return [(item.job, t.config, t.from_count, t.to_count, t.reason) for item in analysis.plan.lists for t in item.trims]


def test_the_list_a_caller_is_passed_is_read_by_configuration() -> None:
    text = lane(entries("default", 3) + "\n" + entries("distributed", 2) + "\n" + entry("slow", 1, 1))
    found = passed_shards(parse_workflow(text, PATH), parse_workflow(text, PATH).jobs["test"])
    # a one-shard configuration has nothing to trim
    assert found == PassedShards("build", "test-matrix", (ShardGroup("default", RUNNER, 3),
                                                          ShardGroup("distributed", RUNNER, 2)), "test-matrix")


@pytest.mark.parametrize("listed", [
    entry("default", 1, 3) + "\n" + entry("default", 2, 3),  # shard 3 missing
    entry("default", 1, 2) + "\n" + entry("default", 2, 3),  # counts that disagree
    entry("default", 1, 2) + "\n" + entry("default", 1, 2),  # shard 1 twice, no shard 2
    '          { config: "default", shard: true, num_shards: 2 },\n'
    '          { config: "default", shard: 2, num_shards: 2 },',  # a boolean is no shard number
    '          { shard: 1, num_shards: 2 },\n          { shard: 2, num_shards: 2 },',  # no configuration
])
def test_a_list_not_numbered_one_to_its_count_is_not_read_as_shards(listed: str) -> None:
    workflow = parse_workflow(lane(listed), PATH)
    assert passed_shards(workflow, workflow.jobs["test"]) is None


@pytest.mark.parametrize("text", [
    lane(entries("default", 2)).replace("${{ needs.build.outputs.test-matrix }}", "${{ inputs.test-matrix }}"),
    lane(entries("default", 2)).replace("outputs.test-matrix", "outputs.matrix"),  # the build job writes no `matrix`
    lane("          { config: [ }"),  # does not parse
    lane(entries("default", 2)).replace("{ include: [", "[").replace("]}", "]"),  # no `include`
])
def test_no_list_is_read_where_the_caller_is_not_passed_one_written_out(text: str) -> None:
    workflow = parse_workflow(text, PATH)
    assert passed_shards(workflow, workflow.jobs["test"]) is None


def test_called_values_are_the_parentheses_ending_the_called_jobs_name() -> None:
    assert called_values(f"linux-rocm / test (default, 1, 6, {RUNNER}, unstable)") == (
        "default", "1", "6", RUNNER, "unstable")
    assert called_values("linux-rocm / build") == ()
    assert called_values("test (default, 1, 2, r)") == ()  # not a called job's name
    assert ShardGroup("default", RUNNER, 6).holds(("default", "2", "6", RUNNER, "unstable"))
    assert not ShardGroup("default", RUNNER, 6).holds(("default", "2", "5", RUNNER))
    assert not ShardGroup("default", RUNNER, 6).holds(("default", "2", "6", "linux.rocm.gpu.mi355.2"))
    assert not ShardGroup("default", RUNNER, 6).holds(("distributed", "2", "6", RUNNER))


def test_the_times_of_each_configuration_are_said_against_a_timeout_foldbot_does_not_read() -> None:
    history = runs({("default", RUNNER): [60, 50, 40], ("distributed", RUNNER): [30, 30]})
    assert by_hand(lane(entries("default", 3) + "\n" + entries("distributed", 2)), history) == [
        "test: `default` runs 3 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 150 min "
        "per run (median), the longest shard 60 min (p90). On fewer shards the longest would take about 2 \u2192 90 min, "
        "1 \u2192 150 min (p90, today's shard times scaled); each shard fewer saves one setup of 38 min (median). The "
        "jobs' timeout is set in `./.github/workflows/_rocm-test.yml`, which foldbot does not read: weigh these against "
        "it, and change the list by hand",
        "test: `distributed` runs 2 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 60 min "
        "per run (median), the longest shard 30 min (p90). On fewer shards the longest would take about 1 \u2192 60 min "
        "(p90, today's shard times scaled); each shard fewer saves one setup of 38 min (median). The jobs' timeout is "
        "set in `./.github/workflows/_rocm-test.yml`, which foldbot does not read: weigh these against it, and change "
        "the list by hand",
    ]


def test_a_scheduled_runs_copies_in_pytorchs_periodic_modes_are_no_samples_of_the_configuration() -> None:
    """review83 f01: rocm-mi300.yml's daily run copies each entry once a periodic mode, its jobs named
    `test (default, 1, 3, <runner>, mem_leak_check)`, with a 600-min timeout and ~2.5x the time: they
    were counted as `default`'s shards (or made it "not told apart"). They are left out, and said."""
    history = runs({("default", RUNNER): [60, 50, 40]})
    history[1] = bundle(  # the scheduled run: every entry once a mode
        run_id=9700, repo="pytorch/pytorch", workflow_path=PATH, workflow_name="rocm-mi300", head_sha=f"{7:040x}",
        start=datetime(2026, 8, 11, tzinfo=timezone.utc), event="schedule", jobs=[
            api_job("linux-rocm / build", [Step("Build", 70)], ["linux.2xlarge"]),
            *[amd_job(f"linux-rocm / test (default, {s}, 3, {RUNNER}, {mode})", labels=[RUNNER], setup_minutes=38,
                      tests=[("Test", m * factor)])
              for mode, factor in (("mem_leak_check", 2.5), ("rerun_disabled_tests", 0.3))
              for s, m in enumerate((60, 50, 40), 1)]])
    assert by_hand(lane(entries("default", 3)), history) == [
        "test: `default` runs 3 shards (`num_shards` in `build`'s `test-matrix`); over 2 runs its tests took 150 min "
        "per run (median), the longest shard 60 min (p90) (its copies in pytorch's periodic modes, `mem_leak_check`, "
        "`rerun_disabled_tests`, left out: another configuration, with a timeout of its own). On fewer shards the "
        "longest would take about 2 \u2192 90 min, 1 \u2192 150 min (p90, today's shard times scaled); each shard fewer "
        "saves one setup of 38 min (median). The jobs' timeout is set in `./.github/workflows/_rocm-test.yml`, which "
        "foldbot does not read: weigh these against it, and change the list by hand",
    ]


def test_a_timeout_the_caller_passes_names_the_count() -> None:
    history = runs({("default", RUNNER): [60, 50, 40]})
    assert trimmed(lane(entries("default", 3), "      timeout-minutes: 160\n"), history) == [(
        "test", "default", 3, 2,
        "`default` runs 3 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 150 min "
        "per run (median), the longest shard 60 min (p90). On 2 the longest would take about 90 min (p90, today's "
        "shard times scaled), within 60% of the 160-min `timeout-minutes` this job passes; each shard fewer saves one "
        "setup of 38 min (median)")]
    assert by_hand(lane(entries("default", 3), "      timeout-minutes: 100\n"), history) == [
        "test: `default` runs 3 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 150 min "
        "per run (median), the longest shard 60 min (p90). 3 shards are needed: on 2 the longest would take about "
        "90 min (p90), over 60% of the 100-min `timeout-minutes` this job passes"]
    [(_, _, _, to, reason)] = trimmed(lane(entries("default", 4), "      timeout-minutes: 200\n"),
                                      runs({("default", RUNNER): [40] * 4}))
    assert to == 2 and reason.endswith(
        "On 2 the longest would take about 80 min (p90, today's shard times scaled), within 60% of the "
        "200-min `timeout-minutes` this job passes; each shard fewer saves one setup of 38 min (median)")


def test_a_configuration_on_two_runners_is_said_per_runner_and_a_run_missing_a_shard_is_no_sample() -> None:
    navi = "linux.rocm.gpu.navi31"
    history = runs({("default", RUNNER): [60, 50, 40], ("default", navi): [20, 20]})
    history[0]["jobs"] = [j for j in history[0]["jobs"] if j["name"] != f"linux-rocm / test (default, 2, 2, {navi})"]
    for run in history[1:]:
        run["jobs"] = [j for j in run["jobs"] if j["name"] != f"linux-rocm / test (default, 2, 2, {navi})"]
    found = by_hand(lane(entries("default", 3) + "\n" + entries("default", 2, navi)), history)
    assert found[0].startswith(f"test: `default` on `{RUNNER}` runs 3 shards")
    assert found[1] == (f"test: `default` on `{navi}` runs 2 shards (`num_shards` in `build`'s `test-matrix`); no run "
                        "in the history ran all 2 of them, so nothing is said of fewer")


def test_the_report_shows_them_apart_from_what_foldbot_edits() -> None:
    history = runs({("default", RUNNER): [60, 50, 40]})
    analysis = analyze({PATH: lane(entries("default", 3))}, history, RepoConfig())
    markdown = to_markdown(analysis)
    assert ("**Shard lists left as they are** (measured; no count foldbot can set)\n\n"
            "- `test`: `default` runs 3 shards") in markdown
    assert [f["job"] for f in to_json(analysis)["by_hand"]] == ["test"]
    # the reusable workflow's finding stays: its jobs are not folded either
    assert "`test`: its AMD jobs run the reusable workflow `./.github/workflows/_rocm-test.yml`" in markdown


def test_pytorch_s_rocm_mi300_lane_as_modelled_gets_its_measured_counts() -> None:
    history = [bundle(run_id=9500 + k, repo="pytorch/pytorch", workflow_path=PATH, workflow_name="rocm-mi300",
                      head_sha=f"{k + 1:040x}", start=datetime(2026, 8, 10 + k, tzinfo=timezone.utc), jobs=[
                          api_job("linux-focal-rocm6.3-py3.10 / build", [Step("Build", 70)], ["linux.2xlarge"]),
                          *[amd_job(f"linux-focal-rocm6.3-py3.10 / test (default, {s}, 2, {RUNNER})", labels=[RUNNER],
                                    setup_minutes=38, tests=[("Test", 8)]) for s in (1, 2)]]) for k in range(3)]
    assert by_hand(PYTORCH_ROCM_MI300, history) == [
        "linux-focal-rocm6_3-py3_10-test: `default` runs 2 shards (`num_shards` in `linux-focal-rocm6_3-py3_10-build`'s "
        "`test-matrix`); over 3 runs its tests took 16 min per run (median), the longest shard 8 min (p90). On fewer "
        "shards the longest would take about 1 \u2192 16 min (p90, today's shard times scaled); each shard fewer saves "
        "one setup of 38 min (median). The jobs' timeout is set in `./.github/workflows/_rocm-test.yml`, which foldbot "
        "does not read: weigh these against it, and change the list by hand"]


CALLEE = ".github/workflows/_rocm-test.yml"


def callee(timeout: str = "${{ matrix.mem_leak_check == 'mem_leak_check' && 600 || inputs.timeout-minutes }}",
           default: str = "300") -> str:
    """A called test workflow as pytorch's `_rocm-test.yml` is built: the list comes in as an input and
    is the matrix; the job's timeout is an input with a default (600 min for a leak check)."""
    return f"""name: test
on:
  workflow_call:
    inputs:
      test-matrix:
        required: true
        type: string
      timeout-minutes:
        required: false
        type: number
{"        default: " + default if default else ""}
jobs:
  test:
    strategy:
      matrix: ${{{{ fromJSON(inputs.test-matrix) }}}}
      fail-fast: false
    timeout-minutes: {timeout}
    runs-on: ${{{{ matrix.runner }}}}
    name: test (${{{{ matrix.config }}}}, ${{{{ matrix.shard }}}}, ${{{{ matrix.num_shards }}}}, ${{{{ matrix.runner }}}})
    steps:
      - name: Test
        run: .ci/pytorch/test.sh
"""


@pytest.mark.parametrize("called,passed,minutes", [
    (callee(), "", 300.0),  # the input's default; not the leak check's 600
    (callee(), "      timeout-minutes: 240\n", 240.0),  # what the caller passes
    (callee(timeout="200"), "", 200.0),
    (callee().replace("    timeout-minutes: ${{", "    x-timeout: ${{"), "", 360.0),  # none: GitHub's own 360
    (callee(default=""), "", None),  # an input with no default, not passed: no guess (not 600)
    (callee().replace("inputs.test-matrix", "inputs.other"), "", None),  # no job reads the list
    (callee(), "      timeout-minutes: ${{ vars.ROCM_TIMEOUT }}\n", None),  # the caller's own expression: not known
])
def test_the_called_job_s_timeout_is_read_with_what_the_caller_passes(called: str, passed: str,
                                                                      minutes: float | None) -> None:
    lane_workflow = parse_workflow(lane(entries("default", 3), passed), PATH)
    found = passed_shards(lane_workflow, lane_workflow.jobs["test"])
    assert found is not None and shard_callees(lane_workflow) == [CALLEE]
    given = lane_workflow.data["jobs"]["test"]["with"]
    assert callee_timeout(parse_workflow(called, CALLEE), found, given, (RUNNER,)) == (
        None if minutes is None else ("test", minutes))


def test_with_the_called_file_read_the_count_is_named_against_its_job_s_timeout() -> None:
    history = runs({("default", RUNNER): [90, 70, 50]})
    assert trimmed(lane(entries("default", 3)), history, called=callee()) == [(
        "test", "default", 3, 2,
        "`default` runs 3 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 210 min per run "
        "(median), the longest shard 90 min (p90). On 2 the longest would take about 135 min (p90, today's shard times "
        "scaled), within 60% of the 300-min `timeout-minutes` of `.github/workflows/_rocm-test.yml`'s `test` job; "
        "each shard fewer saves one setup of 38 min (median)")]
    unknown = analyze({PATH: lane(entries("default", 3))}, history, RepoConfig(), called={CALLEE: callee(default="")})
    assert "`.github/workflows/_rocm-test.yml` gives the job that runs them no timeout foldbot can tell: weigh these " \
        "against it" in unknown.plan.by_hand[0].reason
    broken = analyze({PATH: lane(entries("default", 3))}, history, RepoConfig(), called={CALLEE: "jobs: ["})
    assert any(w.startswith(f"{CALLEE}:") and w.endswith("(read for its jobs' timeouts and the shard counts passed to it, which are then not known)") for w in broken.warnings)
    assert "which foldbot does not read" in broken.plan.by_hand[0].reason


def pytorch_world(fake: FakeGitHub, text: str | None = None,
                  times: dict[tuple[str, str], list[float]] | None = None) -> World:
    """pytorch/pytorch in the fake: the lane above (or `text`), its called test workflow, three runs."""
    repo = fake.add_repo("pytorch", "pytorch")
    repo.put_files("main", {PATH: text or lane(entries("default", 3)), CALLEE: callee(),
                            ".github/workflows/_linux-build.yml": "on: workflow_call\njobs: {}\n",
                            ".github/foldbot.yml": f"lanes:\n  - {PATH}\n"}, message="ROCm lane")
    fake.add_workflow(repo, 7001, PATH)
    fake.add_installation(INSTALLATION, [repo])
    world = World(fake, repo)
    for run_bundle in runs(times or {("default", RUNNER): [90, 70, 50]}):
        run = dict(run_bundle["workflow_run"])
        run.update(workflow_id=7001, path=PATH, event="push", head_repository=repo.full_name, pull_requests=[])
        stored = fake.add_run(repo, run)
        fake.add_jobs(stored["id"], run_bundle["jobs"])
        world.runs.append(stored)
    return world


COUNTED = ("within 60% of the 300-min `timeout-minutes` of `.github/workflows/_rocm-test.yml`'s `test` job; each shard "
           "fewer saves one setup of 38 min")


async def test_the_app_reads_the_called_file_once_and_reports_the_count(fake_github: FakeGitHub, bot: Bot) -> None:
    world = pytorch_world(fake_github)
    for run in world.runs[-2:]:  # cold, then warm
        await bot.deliver("workflow_run", world.payload(run["id"]))
        await bot.settle()
    [board] = dashboards(fake_github, world)
    assert ("  - `default` runs 3 shards \\(`num_shards` in `build`'s `test-matrix`\\); over 3 runs its tests took "
            "210 min per run \\(median\\), the longest shard 90 min \\(p90\\). On 2 the longest would take about "
            "135 min \\(p90, today's shard times scaled\\), within 60% of the 300-min `timeout-minutes` of "
            "`.github/workflows/_rocm-test.yml`'s `test` job;") in board.body
    assert fake_github.count("GET", r"/contents/\.github/workflows/_rocm-test\.yml") == 1  # then its blob is known
    assert fake_github.count("GET", r"/contents/\.github/workflows/_linux-build\.yml") == 0  # it runs no shards


def test_the_cli_reads_the_called_file_from_the_repo_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.__main__ import main

    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / PATH).write_text(lane(entries("default", 3)))
    (tmp_path / CALLEE).write_text(callee(timeout="100"))
    (tmp_path / ".github/foldbot.yml").write_text(f"lanes:\n  - {PATH}\n")
    run_args = []
    for run_bundle in runs({("default", RUNNER): [70, 60, 50]}):
        file = tmp_path / f"run-{run_bundle['workflow_run']['id']}.json"
        file.write_text(json.dumps(run_bundle))
        run_args += ["--run", str(file)]
    assert main(["analyze", "--repo-root", str(tmp_path), *run_args, "--format", "json"]) == 0
    [found] = json.loads(capsys.readouterr().out)["by_hand"]
    assert found["reason"].endswith("3 shards are needed: on 2 the longest would take about 105 min (p90), over 60% of "
                                    "the 100-min `timeout-minutes` of `.github/workflows/_rocm-test.yml`'s `test` job")


async def test_fetch_writes_the_called_file_and_analyze_fetched_reads_it(fake_github: FakeGitHub, tmp_path: Path) -> None:
    from tests.test_fetch import TOKEN, foldbot

    pytorch_world(fake_github)
    fake_github.add_personal_token(TOKEN, "maintainer")
    code, _, err = await foldbot(fake_github, "fetch", "--repo", "pytorch/pytorch", "--out", str(tmp_path))
    assert code == 0, err
    assert (tmp_path / "repo" / CALLEE).read_text() == callee()
    assert not (tmp_path / "repo" / ".github/workflows/_linux-build.yml").exists()
    code, report, err = await foldbot(fake_github, "analyze", "--fetched", str(tmp_path), "--no-checks")
    assert code == 0, err
    assert COUNTED.replace("(", "\\(") in report


@pytest.mark.parametrize("listed", [
    entry("default", 1, 1_000_000_000) + "\n" + entry("default", 2, 1_000_000_000),  # counts nobody runs
    "          { config: [" + "[" * 3000 + "]" * 3000 + "], shard: 1, num_shards: 2 },",  # nested past the stack
    entry("default", 1, 2) + "\n" + entry("default", 2, 2) + "\n" + "          # " + "x" * 70_000,  # too long to read
])
def test_a_shard_list_that_would_take_long_to_read_is_not_read(listed: str) -> None:
    workflow = parse_workflow(lane(listed), PATH)
    assert passed_shards(workflow, workflow.jobs["test"]) is None


def test_a_configuration_that_is_no_scalar_is_not_printed() -> None:
    """An alias that repeats itself nine times nine levels deep prints as 9**9 words."""
    bomb = "\n".join(["        {"] + [f"          a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9) if i else 'x'}]," for i in range(9)]
                      + ['          include: [{ config: *a8, shard: 1, num_shards: 2 }, { config: *a8, shard: 2, num_shards: 2 }]',
                         "        }"])
    text = lane("").replace("        { include: [\n\n        ]}", bomb)
    workflow = parse_workflow(text, PATH)
    assert passed_shards(workflow, workflow.jobs["test"]) is None


def test_a_shard_number_that_is_no_decimal_is_no_shard() -> None:
    assert not ShardGroup("default", RUNNER, 3).holds(("default", "\u00b2", "3", RUNNER))


def test_a_called_file_that_is_a_lane_too_gives_its_timeout() -> None:
    history = runs({("default", RUNNER): [90, 70, 50]})
    analysis = analyze({PATH: lane(entries("default", 3)), CALLEE: callee()}, history, RepoConfig())
    assert "within 60% of the 300-min `timeout-minutes` of `.github/workflows/_rocm-test.yml`'s `test` job" in \
        analysis.plan.lists[0].trims[0].reason


async def test_a_called_file_that_is_not_text_leaves_the_report_whole(fake_github: FakeGitHub, bot: Bot) -> None:
    world = pytorch_world(fake_github)
    world.repo.put_files("main", {CALLEE: b"\xff\xfe not text"}, message="a binary callee")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    [board] = dashboards(fake_github, world)
    assert "could not analyse" not in board.body
    assert "The jobs' timeout is set in `./.github/workflows/_rocm-test.yml`, which foldbot does not read" in board.body


# --- the patch: the list's text edited, checked as the data it parses to -----------------------------

LISTED = lane(entries("default", 6) + "\n" + entries("distributed", 3) + "\n" + entry("slow", 1, 1),
              "      timeout-minutes: 150\n")
#: default's shards 50..20 min (total 220): on 4 the longest ~75 min, within 60% of 150; distributed's on 2, 60 min.
LISTED_TIMES = {("default", RUNNER): [50, 45, 40, 35, 30, 20], ("distributed", RUNNER): [40, 35, 30]}


def test_the_patch_lowers_num_shards_and_drops_the_shards_past_it() -> None:
    analysis = analyze({PATH: LISTED}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    [listed] = analysis.plan.lists
    assert [(t.config, t.from_count, t.to_count) for t in listed.trims] == [("default", 6, 4), ("distributed", 3, 2)]
    assert (listed.job, listed.writer, listed.key, listed.setup_cycles_saved) == ("test", "build", "test-matrix", 3)
    assert analysis.warnings == ()
    assert analysis.patch == f"""diff --git a/{PATH} b/{PATH}
--- a/{PATH}
+++ b/{PATH}
@@ -7,15 +7,12 @@
     with:
       test-matrix: |
         {{ include: [
-          {{ config: "default", shard: 1, num_shards: 6, runner: "{RUNNER}" }},
+          {{ config: "default", shard: 1, num_shards: 4, runner: "{RUNNER}" }},
-          {{ config: "default", shard: 2, num_shards: 6, runner: "{RUNNER}" }},
+          {{ config: "default", shard: 2, num_shards: 4, runner: "{RUNNER}" }},
-          {{ config: "default", shard: 3, num_shards: 6, runner: "{RUNNER}" }},
+          {{ config: "default", shard: 3, num_shards: 4, runner: "{RUNNER}" }},
-          {{ config: "default", shard: 4, num_shards: 6, runner: "{RUNNER}" }},
+          {{ config: "default", shard: 4, num_shards: 4, runner: "{RUNNER}" }},
-          {{ config: "default", shard: 5, num_shards: 6, runner: "{RUNNER}" }},
-          {{ config: "default", shard: 6, num_shards: 6, runner: "{RUNNER}" }},
-          {{ config: "distributed", shard: 1, num_shards: 3, runner: "{RUNNER}" }},
+          {{ config: "distributed", shard: 1, num_shards: 2, runner: "{RUNNER}" }},
-          {{ config: "distributed", shard: 2, num_shards: 3, runner: "{RUNNER}" }},
+          {{ config: "distributed", shard: 2, num_shards: 2, runner: "{RUNNER}" }},
-          {{ config: "distributed", shard: 3, num_shards: 3, runner: "{RUNNER}" }},
           {{ config: "slow", shard: 1, num_shards: 1, runner: "{RUNNER}" }},
         ]}}
   test:
"""
    [edit] = analysis.edits
    after = parse_workflow(edit.after, PATH)
    assert passed_shards(after, after.jobs["test"]).groups == (ShardGroup("default", RUNNER, 4),
                                                                ShardGroup("distributed", RUNNER, 2))
    markdown = to_markdown(analysis)
    assert ("- **Trim the shard list** `test-matrix` of `build` (the jobs of `test`): `default` 6 \u2192 4 shards; "
            "`distributed` 3 \u2192 2 shards. Saves 3 setup cycles, ~1.9 runner-hours per run; **slower** wall clock "
            "(its longest shard 50 \u2192 75 min at p90: the shards run side by side, so each one left carries more "
            "tests).\n  - `default` runs 6 shards") in markdown
    assert (f"- `{PATH}`: `build`'s `test-matrix` lists `default` with 4 shards instead of 6, `distributed` with 2 "
            "shards instead of 3 (`num_shards` lowered, the shards past it dropped).") in markdown
    [suggestion] = to_json(analysis)["suggestions"]
    assert suggestion["kind"] == "shard-list" and [(c["config"], c["from"], c["to"]) for c in suggestion["configs"]] == [
        ("default", 6, 4), ("distributed", 3, 2)]


@pytest.mark.parametrize("change,why", [
    # two entries on a line: dropping a line would drop both
    (lambda text: text.replace(f'runner: "{RUNNER}" }},\n          {{ config: "default", shard: 6',
                               f'runner: "{RUNNER}" }}, {{ config: "default", shard: 6'),
     "`build`'s `test-matrix` does not list the 6 shards of `default` one per line"),
    # a comment after an entry: the line is not only the entry
    (lambda text: text.replace(f'shard: 6, num_shards: 6, runner: "{RUNNER}" }},',
                               f'shard: 6, num_shards: 6, runner: "{RUNNER}" }},  # the slowest'),
     "`build`'s `test-matrix` does not list the 6 shards of `default` one per line"),
    # folded: its lines are one line to the workflow that reads it
    (lambda text: text.replace("test-matrix: |", "test-matrix: >"),
     "`build` has no `with: test-matrix` written as a literal block (`|`)"),
])
def test_a_list_not_written_one_entry_per_line_gets_no_patch(change, why: str) -> None:  # noqa: ANN001
    text = change(LISTED)
    analysis = analyze({PATH: text}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    assert [t.to_count for item in analysis.plan.lists for t in item.trims] == [4, 2]  # measured all the same
    assert analysis.patch == "" and analysis.edits == []
    assert analysis.warnings == (f"{PATH}: no patch for this file: {PATH}: {why}",)


def test_a_patched_list_that_is_not_the_plan_fails_its_check() -> None:
    from bot.edit import FileEdit, LaneChange, ListEdit, ListTrimEdit, VerificationError, verify_edit

    workflow = parse_workflow(LISTED, PATH)
    change = LaneChange(PATH, lists=(ListEdit("test", "build", "test-matrix", (ListTrimEdit("default", RUNNER, 6, 4),)),))
    # num_shards lowered, but shards 5 and 6 kept
    kept = LISTED.replace("num_shards: 6", "num_shards: 4")
    with pytest.raises(VerificationError, match=r"^\.github/workflows/rocm-mi300\.yml: the patched file differs from the "
                                                r"plan at /jobs/build/with/test-matrix/include: 8 entries expected, 10 found$"):
        verify_edit(workflow, change, FileEdit(PATH, LISTED, kept), RepoConfig())
    broken = LISTED.replace('{ config: "default", shard: 5', '{ config: "default", shard: [5')
    with pytest.raises(VerificationError, match="a shard list does not parse"):
        verify_edit(workflow, change, FileEdit(PATH, LISTED, broken), RepoConfig())


MI355 = ".github/workflows/rocm-mi355.yml"


def test_a_sibling_lane_is_trimmed_only_where_it_runs_the_same_shards_on_the_same_runner() -> None:
    same = LISTED.replace("name: rocm-mi300", "name: rocm-mi300-nightly")
    other = LISTED.replace(RUNNER, "linux.rocm.gpu.mi355.2").replace("name: rocm-mi300", "name: rocm-mi355")
    nightly = ".github/workflows/rocm-mi300-nightly.yml"
    analysis = analyze({PATH: LISTED, nightly: same, MI355: other}, runs(LISTED_TIMES), RepoConfig(),
                       called={CALLEE: callee()})
    assert [e.path for e in analysis.edits] == [PATH, nightly]
    assert analysis.warnings == (
        f"{MI355}: `test` is not passed `default` on 6 shards on `{RUNNER}`; not trimmed there",
        f"{MI355}: `test` is not passed `distributed` on 3 shards on `{RUNNER}`; not trimmed there")


async def test_the_list_patch_is_approved_and_committed(fake_github: FakeGitHub, bot: Bot) -> None:
    from bot.publish import read_state
    from tests.test_app_commands import dashboard_comment

    world = pytorch_world(fake_github, LISTED, LISTED_TIMES)
    fake_github.set_permission(world.repo, "lead", "maintain")
    await bot.deliver("workflow_run", world.payload(world.runs[-1]["id"]))
    await bot.settle()
    [board] = dashboards(fake_github, world)
    patch_id = read_state(board.body)["patch_id"]
    assert (await bot.deliver("issue_comment", dashboard_comment(world, f"/fold approve {patch_id}", "lead")))[0] == 202
    await bot.settle()
    branch = f"foldbot/fold-{patch_id}"
    [pull] = [p for p in world.repo.pulls.values() if p.head_ref == branch]
    committed = world.repo.files_at(branch)[PATH]
    assert committed == analyze({PATH: LISTED}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()}).edits[0].after
    assert "num_shards: 6" not in committed and committed.count("num_shards: 4") == 4
    body = world.repo.issues[pull.number].body
    assert "- **Trim the shard list** `test-matrix` of `build`" in body
    assert body.endswith(
        "**Note:** a change to workflow files alone may not trigger the lanes it changes (their path filters and change "
        "gates look at the code).\n\n`/dispatch` cannot run lane `rocm-mi300` (its file has no `workflow_dispatch` "
        "trigger with a `target_stage` input): have it run on this branch another way before merging.\n")


def test_required_checks_of_a_trimmed_list_are_named_with_their_new_names() -> None:
    """Every shard of a trimmed configuration changes its check's name (`num_shards` is in it):
    the approval names the check to require instead, or the shard that goes."""
    from bot import approve

    after = analyze({PATH: LISTED}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()}).edits[0].after
    required = {f"linux-rocm / test (default, 1, 6, {RUNNER})": ["branch protection"],
                f"linux-rocm / test (default, 6, 6, {RUNNER})": ["ruleset 7"],
                f"linux-rocm / test (slow, 1, 1, {RUNNER})": ["branch protection"],  # not in the patch
                "linux-rocm / build": ["branch protection"]}
    gone = approve.required_checks_gone({PATH: LISTED}, {PATH: after}, required)
    assert [g.line() for g in gone] == [
        f"- `linux-rocm / test (default, 1, 6, {RUNNER})` (branch protection): the patch lowers `num_shards` in the "
        f"shard list of `test`, which is in the name: require `linux-rocm / test (default, 1, 4, {RUNNER})` instead "
        f"(`{PATH}`)",
        f"- `linux-rocm / test (default, 6, 6, {RUNNER})` (ruleset 7): a shard the patch trims from the shard list of "
        f"`test`: take it out of the rule (`{PATH}`)"]
    assert approve.required_checks_gone({PATH: LISTED}, {PATH: LISTED}, required) == []


def called_jobs(caller: str, times: dict[tuple[str, str | None], list[float]]) -> list[tuple[str, str, float]]:
    """(name, runner, minutes) of a caller's called jobs as GitHub names them; a runner of None is not named."""
    return [(f"{caller} / test ({config}, {s}, {len(minutes)}" + (f", {runner})" if runner else ")"), runner or RUNNER, m)
            for (config, runner), minutes in times.items() for s, m in enumerate(minutes, 1)]


def runs_of(jobs: list[tuple[str, str, float]], count: int = 3) -> list[dict]:
    """`count` runs of the lane whose called jobs are `jobs` (name, runner, test minutes)."""
    return [bundle(run_id=9600 + k, repo="pytorch/pytorch", workflow_path=PATH, workflow_name="rocm-mi300",
                   head_sha=f"{k + 1:040x}", start=datetime(2026, 8, 10 + k, tzinfo=timezone.utc), jobs=[
                       api_job("linux-rocm / build", [Step("Build", 70)], ["linux.2xlarge"]),
                       *[amd_job(name, labels=[runner], setup_minutes=38, tests=[("Test", m)]) for name, runner, m in jobs]])
            for k in range(count)]


def test_a_list_passed_to_two_callers_is_left_to_be_changed_by_hand() -> None:
    """One list, two callers that each run all of it: a count one of them allows may not fit the other."""
    text = LISTED + """  test-slow:
    name: linux-rocm-slow
    uses: ./.github/workflows/_rocm-test.yml
    needs: build
    with:
      test-matrix: ${{ needs.build.outputs.test-matrix }}
      timeout-minutes: 150
"""
    history = runs_of(called_jobs("linux-rocm", LISTED_TIMES) + called_jobs("linux-rocm-slow", {
        ("default", RUNNER): [60] * 6, ("distributed", RUNNER): [10] * 3}))
    analysis = analyze({PATH: text}, history, RepoConfig(), called={CALLEE: callee()})
    assert analysis.plan.lists == () and analysis.patch == ""
    reasons = [f"{f.job}: {f.reason}" for f in analysis.plan.by_hand]
    assert reasons[0].startswith("test: `default` runs 6 shards") and reasons[0].endswith(
        "each shard fewer saves one setup of 38 min (median). The list is read by `test-slow` too, whose shards a "
        "count must fit as well: change it by hand")
    assert any(r.startswith("test-slow: `default` runs 6 shards") and r.endswith(
        "The list is read by `test` too, whose shards a count must fit as well: change it by hand") for r in reasons)
    assert any(r.startswith("test-slow: `distributed` runs 3 shards") for r in reasons)


NIGHTLY = ".github/workflows/rocm-mi300-nightly.yml"


def test_a_sibling_lane_is_trimmed_only_where_its_own_timeout_allows_the_count() -> None:
    """Each configuration against the timeout the sibling's called job has, with what it passes."""
    other = LISTED.replace("name: rocm-mi300", "name: rocm-mi300-nightly").replace("timeout-minutes: 150",
                                                                                     "timeout-minutes: 110")
    analysis = analyze({PATH: LISTED, NIGHTLY: other}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    assert analysis.warnings == (
        f"{NIGHTLY}: `default` is not trimmed there: on 4 its longest shard would take about 75 min (p90), over 60% of "
        "the 110-min `timeout-minutes` of `.github/workflows/_rocm-test.yml`'s `test` job",)
    assert [e.path for e in analysis.edits] == [PATH, NIGHTLY]  # `distributed` (60 min) fits 66 there
    assert "num_shards: 6" in analysis.edits[1].after and "num_shards: 3" not in analysis.edits[1].after
    # the same minutes written as a string are the same timeout
    quoted = LISTED.replace("name: rocm-mi300", "name: rocm-mi300-nightly").replace("timeout-minutes: 150",
                                                                                      "timeout-minutes: '150'")
    analysis = analyze({PATH: LISTED, NIGHTLY: quoted}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    assert analysis.warnings == () and [e.path for e in analysis.edits] == [PATH, NIGHTLY]


def test_a_sibling_lane_whose_called_job_reads_another_input_for_its_timeout_is_measured_by_it() -> None:
    called = callee(timeout="${{ inputs.test-timeout }}").replace(
        "      timeout-minutes:\n", "      test-timeout:\n        type: number\n      timeout-minutes:\n")
    measured = LISTED.replace("timeout-minutes: 150", "test-timeout: 150")
    other = measured.replace("name: rocm-mi300", "name: rocm-mi300-nightly").replace("test-timeout: 150",
                                                                                       "test-timeout: 40")
    analysis = analyze({PATH: measured, NIGHTLY: other}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: called})
    assert [e.path for e in analysis.edits] == [PATH]
    assert [w.split(": on ")[0] for w in analysis.warnings] == [f"{NIGHTLY}: `default` is not trimmed there",
                                                                f"{NIGHTLY}: `distributed` is not trimmed there"]


@pytest.mark.parametrize("odd", [
    # a line of a quoted note reads as an entry alone, with no date
    '          { config: "slow", shard: 1, num_shards: 1, note: "see\n          { num_shards: 1, since: 2024-02-30 }\n'
    '          end" },',
    "          { config: \"slow\", shard: 1, num_shards: 1, since: 2024-02-30 },",  # the list itself: no date
    "          { config: \"slow\", shard: 1, num_shards: " + "9" * 5000 + " },",  # past Python's digits
])
def test_a_value_yaml_cannot_make_a_python_value_of_is_no_crash(odd: str) -> None:
    text = LISTED.replace(f'          {{ config: "slow", shard: 1, num_shards: 1, runner: "{RUNNER}" }},', odd)
    analysis = analyze({PATH: text}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    if "note" in odd:  # inside a quoted note: the list reads whole, and its lines as they are
        assert [e.path for e in analysis.edits] == [PATH] and "2024-02-30" in analysis.edits[0].after
    else:  # the list does not read: no list, no crash
        assert analysis.plan.lists == () and analysis.plan.by_hand == ()


def test_the_wall_clock_is_the_caller_s_longest_shard_of_any_configuration() -> None:
    """`slow` runs 150 min on its one shard: trimming `default` to 75-min shards does not slow the caller."""
    analysis = analyze({PATH: LISTED}, runs({**LISTED_TIMES, ("slow", RUNNER): [150]}), RepoConfig(),
                       called={CALLEE: callee()})
    [listed] = analysis.plan.lists
    assert (listed.wall_before_s, listed.wall_after_s) == (150 * 60, 150 * 60)
    assert "Saves 3 setup cycles, ~1.9 runner-hours per run; about the same wall clock." in to_markdown(analysis)


def test_shards_whose_names_do_not_say_their_runner_are_not_counted_for_either() -> None:
    navi = "linux.rocm.gpu.navi31"
    text = lane(entries("default", 3).replace(f', runner: "{RUNNER}"', "") + "\n" + entries("default", 3, navi),
                "      timeout-minutes: 150\n")
    history = runs_of(called_jobs("linux-rocm", {("default", None): [100] * 3})
                      + called_jobs("linux-rocm", {("default", navi): [5] * 3}))
    analysis = analyze({PATH: text}, history, RepoConfig(), called={CALLEE: callee()})
    assert analysis.plan.lists == ()
    assert [f.reason.split(" runs ")[0] for f in analysis.plan.by_hand] == ["`default` with no runner", f"`default` on `{navi}`"]
    assert all("its jobs' names do not tell its shards from another configuration's" in f.reason
               for f in analysis.plan.by_hand)


@pytest.mark.parametrize("written", [
    lambda text: re.sub(r"\b(config|shard|num_shards|runner):", r'"\1":', text),  # JSON's quoted keys
    lambda text: text.replace("{ include: [", "include:").replace("        ]}\n", "").replace("          {", "          - {")
    .replace("},\n", "}\n"),  # a block sequence of flow entries
])
def test_lists_written_as_json_or_as_a_block_sequence_are_trimmed_too(written) -> None:  # noqa: ANN001
    text = written(LISTED)
    analysis = analyze({PATH: text}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    assert analysis.warnings == () and [e.path for e in analysis.edits] == [PATH]
    after = parse_workflow(analysis.edits[0].after, PATH)
    assert passed_shards(after, after.jobs["test"]).groups == (ShardGroup("default", RUNNER, 4),
                                                                ShardGroup("distributed", RUNNER, 2))


def test_a_list_another_job_reads_through_an_alias_gets_a_short_refusal() -> None:
    text = LISTED.replace("test-matrix: |", "test-matrix: &tm |") + "  other:\n    uses: ./x.yml\n    with:\n      m: *tm\n"
    analysis = analyze({PATH: text}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    [warning] = analysis.warnings
    assert analysis.patch == "" and len(warning) < 350
    assert warning.startswith(f"{PATH}: no patch for this file: {PATH}: the patched file differs from the plan at "
                              "/jobs/other/with/m: '{ include: [\\n")


def test_a_caller_with_a_name_of_its_own_has_its_required_list_checks_named() -> None:
    from bot import approve

    text = LISTED.replace("  test:\n    name: linux-rocm\n", "  test:\n    name: linux-rocm-test\n")
    after = analyze({PATH: text}, runs_of(called_jobs("linux-rocm-test", LISTED_TIMES)), RepoConfig(),
                    called={CALLEE: callee()}).edits[0].after
    gone = approve.required_checks_gone({PATH: text}, {PATH: after}, {
        f"linux-rocm-test / test (default, 6, 6, {RUNNER})": ["branch protection"],
        f"linux-rocm-test / test (slow, 1, 1, {RUNNER})": ["branch protection"],
        f"linux-rocm-test / test (default, 06, 6, {RUNNER})": ["branch protection"]})  # not as GitHub writes it
    assert [(g.check, g.renamed) for g in gone] == [(f"linux-rocm-test / test (default, 6, 6, {RUNNER})", "")]


READERS = {
    "a plain job's matrix": """  test-slow:
    needs: build
    runs-on: ${{ matrix.runner }}
    timeout-minutes: 60
    strategy:
      matrix: ${{ fromJSON(needs.build.outputs.test-matrix) }}
    steps:
      - run: .ci/pytorch/test.sh
""",
    "brackets": """  test-slow:
    uses: ./.github/workflows/_rocm-test.yml
    needs: build
    with:
      test-matrix: ${{ needs.build.outputs['test-matrix'] }}
      timeout-minutes: 30
""",
    "another case": """  test-slow:
    uses: ./.github/workflows/_rocm-test.yml
    needs: build
    with:
      test-matrix: ${{ NEEDS.Build.Outputs.Test-Matrix }}
      timeout-minutes: 30
""",
    "a function around it": """  test-slow:
    uses: ./.github/workflows/_rocm-test.yml
    needs: build
    with:
      test-matrix: ${{ toJSON(fromJSON(needs.build.outputs.test-matrix)) }}
      timeout-minutes: 30
""",
}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_list_any_other_job_reads_is_left_to_be_changed_by_hand(reader: str) -> None:
    analysis = analyze({PATH: LISTED + reader}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    assert analysis.plan.lists == () and analysis.patch == ""
    assert [f.reason.endswith("The list is read by `test-slow` too, whose shards a count must fit as well: change it "
                              "by hand") for f in analysis.plan.by_hand] == [True, True]


def test_a_list_another_job_reads_in_a_sibling_lane_is_not_trimmed_there() -> None:
    other = LISTED.replace("name: rocm-mi300", "name: rocm-mi300-nightly") + READERS["brackets"]
    analysis = analyze({PATH: LISTED, NIGHTLY: other}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    assert [e.path for e in analysis.edits] == [PATH]
    assert analysis.warnings == (f"{NIGHTLY}: `test`'s list is not trimmed there. The list is read by `test-slow` too, "
                                 "whose shards a count must fit as well",)


def test_a_configuration_trimmed_to_one_shard_has_its_check_renamed_not_dropped() -> None:
    from bot import approve

    times = {("default", RUNNER): [20, 18, 15, 12, 10, 5], ("distributed", RUNNER): [40, 35, 30]}
    analysis = analyze({PATH: LISTED}, runs(times), RepoConfig(), called={CALLEE: callee()})
    assert [(t.config, t.to_count) for t in analysis.plan.lists[0].trims] == [("default", 1), ("distributed", 2)]
    gone = approve.required_checks_gone({PATH: LISTED}, {PATH: analysis.edits[0].after}, {
        f"linux-rocm / test (default, 1, 6, {RUNNER})": ["branch protection"],
        f"linux-rocm / test (default, 2, 6, {RUNNER})": ["branch protection"]})
    assert [(g.check, g.renamed) for g in gone] == [
        (f"linux-rocm / test (default, 1, 6, {RUNNER})", f"linux-rocm / test (default, 1, 1, {RUNNER})"),
        (f"linux-rocm / test (default, 2, 6, {RUNNER})", "")]


def test_the_wall_clock_is_of_the_list_s_shards_not_the_called_workflow_s_other_jobs() -> None:
    """A report job of the called workflow (100 min, after the shards or beside them) is no shard."""
    text = LISTED.replace("  test:\n    name: linux-rocm\n", "  test:\n    name: linux-rocm-test\n")
    jobs = called_jobs("linux-rocm-test", LISTED_TIMES) + [("linux-rocm-test / report", RUNNER, 100)]
    analysis = analyze({PATH: text}, runs_of(jobs), RepoConfig(), called={CALLEE: callee()})
    assert max(j.test_seconds for j in analysis.stats["test"].per_run[0]) == 100 * 60  # the caller's job, measured
    [listed] = analysis.plan.lists
    assert (listed.wall_before_s, listed.wall_after_s) == (50 * 60, 75 * 60)


def test_a_lane_whose_aliases_repeat_values_past_the_limit_is_not_read() -> None:
    """Nine aliases of nine, nine deep, are 387 million values read out (minutes of work in a worker):
    refused at once, by a count of the tree's nodes. Aliases that repeat less are read."""
    def bomb(depth: int) -> str:
        anchors = "\n".join(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9) if i else 'x'}]" for i in range(depth))
        return LISTED.replace("on: push\n", f"on: push\nenv:\n{anchors}\n") + (
            f"  other:\n    uses: ./x.yml\n    needs: build\n    with:\n      m: *a{depth - 1}\n")

    text = bomb(9)
    with pytest.raises(WorkflowError, match=r"^\.github/workflows/rocm-mi300\.yml: its aliases repeat values past "
                                            r"200,000 in all \(a value read as many times as aliases name it; a text of 64 "
                                            r"characters counts as one\); not read$"):
        analyze({PATH: text}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})
    analysis = analyze({PATH: bomb(5)}, runs(LISTED_TIMES), RepoConfig(), called={CALLEE: callee()})  # 2 x 9**4 values
    assert [e.path for e in analysis.edits] == [PATH]  # `other` reads no list
    with pytest.raises(WorkflowError, match="contains itself through an alias"):
        parse_workflow("on: push\njobs:\n  a: &a\n    steps: [*a]\n", "ci.yml")


def test_a_lane_whose_gate_skips_its_callers_is_said_gated_not_lacking_an_amd_runner() -> None:
    """review99 f01, f02: in ROCm's fork of pytorch every job of `rocm-mi300.yml` is skipped (its build callers run
    only where `github.repository_owner == 'pytorch'`). A skipped caller has no labels, and its file no `runs-on`:
    the runners of the list it is passed say it is an AMD job. The report had said "labels seen: only GitHub-hosted
    ones" with an `amd_runner_pattern` fix (the default already matches the list's runner), and told the build and
    test callers, which share a name, to be renamed; now it names the gated jobs and says no AMD job ran a test."""
    text = lane(entries("default", 3))
    gated = [bundle(run_id=9700 + k, repo="ROCm/pytorch", workflow_path=PATH, workflow_name="rocm-mi300",
                    head_sha=f"{k + 1:040x}", start=datetime(2026, 8, 10 + k, tzinfo=timezone.utc),
                    jobs=[skipped_job("linux-rocm"), skipped_job("linux-rocm")]) for k in range(3)]
    analysis = analyze({PATH: text}, gated, RepoConfig())
    assert [(u.subject, u.reason) for u in analysis.unmeasured] == [
        ("AMD test time", "no AMD job of the 3 runs ran a test step (6 jobs: 6 skipped)")]
    report = to_markdown(analysis)
    assert "**No AMD job spent time on setup or tests in the latest run**: it skipped `linux-rocm` (a gate)" in report

    # a caller passed no list (its runners nowhere in the file): no job was given a runner, and the report says so
    unknown = text.replace("      test-matrix: ${{ needs.build.outputs.test-matrix }}\n", "      test-matrix: '{}'\n")
    assert [(u.subject, u.reason, u.fix) for u in analyze({PATH: unknown}, gated, RepoConfig()).unmeasured] == [
        ("AMD jobs", "no job of the 3 runs ran on a runner (6 jobs: 6 skipped), so no runner label was seen; the "
                     "runners of `build`, `test` are not known before a run (an expression, or a reusable workflow's "
                     "runners)",
         "wait for a run whose jobs run (their `if:` decides it: one that never holds in this repository, as a fork's "
         "check of `github.repository_owner`, skips them every time); then their labels tell which are AMD runners")]


def test_the_test_step_s_own_timeout_is_the_limit_where_it_is_shorter_and_said_where_not_known() -> None:
    """review99 f05: pytorch's `Test` step stops the tests at the job's timeout less 30 minutes (a step before it sets
    `timeout-minutes: ${{ fromJson(steps.test-timeout.outputs.timeout) }}`); the trim was weighed against the job's
    300 minutes alone, and a literal step timeout shorter than the prediction did not stop it."""
    history = runs({("default", RUNNER): [90, 70, 50]})
    step = "      - name: Test\n        run: .ci/pytorch/test.sh\n"
    literal = callee().replace(step, step.replace("run:", "timeout-minutes: 240\n        run:"))
    assert trimmed(lane(entries("default", 3)), history, called=literal)[0][4].endswith(
        "On 2 the longest would take about 135 min (p90, today's shard times scaled), within 60% of the 240-min "
        "`timeout-minutes` of the `Test` step of `.github/workflows/_rocm-test.yml`'s `test` job; each shard fewer "
        "saves one setup of 38 min (median)")
    short = literal.replace("timeout-minutes: 240\n", "timeout-minutes: 150\n")
    assert short != literal
    assert not analyze({PATH: lane(entries("default", 3))}, history, RepoConfig(), called={CALLEE: short}).plan.lists
    unknown = callee().replace(step, step.replace(
        "run:", "timeout-minutes: ${{ fromJson(steps.test-timeout.outputs.timeout) }}\n        run:"))
    assert trimmed(lane(entries("default", 3)), history, called=unknown)[0][4].endswith(
        "within 60% of the 300-min `timeout-minutes` of `.github/workflows/_rocm-test.yml`'s `test` job (its `Test` "
        "step's own `timeout-minutes`, `${{ fromJson(steps.test-timeout.outputs.timeout) }}`, is not known before it "
        "runs, and may stop the tests sooner); each shard fewer saves one setup of 38 min (median)")
