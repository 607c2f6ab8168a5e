"""Shard lists passed to a reusable workflow as a string another job writes: pytorch's ROCm
lanes (`rocm-mi300.yml`, `periodic-rocm-mi200.yml`, ...), where the build job's `with:
test-matrix` lists `{ config, shard, num_shards, runner }` entries and the test job hands it to
`_rocm-test.yml`. foldbot does not edit such a list; it measures each configuration's shards
and says what the times allow, to change by hand."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.plan import PassedShards, ShardGroup, called_values, passed_shards
from bot.report import to_json, to_markdown
from bot.workflow import parse_workflow
from tests.builders import PYTORCH_ROCM_MI300, Step, amd_job, bundle, job as api_job

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
    analysis = analyze({PATH: text}, history, RepoConfig())
    assert analysis.plan.empty  # nothing foldbot edits itself
    return [f"{f.job}: {f.reason}" for f in analysis.plan.by_hand]


def test_the_list_a_caller_is_passed_is_read_by_configuration() -> None:
    text = lane(entries("default", 3) + "\n" + entries("distributed", 2) + "\n" + entry("slow", 1, 1))
    found = passed_shards(parse_workflow(text, PATH), parse_workflow(text, PATH).jobs["test"])
    # a one-shard configuration has nothing to trim
    assert found == PassedShards("build", "test-matrix", (ShardGroup("default", RUNNER, 3),
                                                          ShardGroup("distributed", RUNNER, 2)))


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
        "1 \u2192 180 min (p90, today's shard times scaled); each shard fewer saves one setup of 38 min (median). The "
        "jobs' timeout is set in `./.github/workflows/_rocm-test.yml`, which foldbot does not read: weigh these against "
        "it, and change the list by hand",
        "test: `distributed` runs 2 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 60 min "
        "per run (median), the longest shard 30 min (p90). On fewer shards the longest would take about 1 \u2192 60 min "
        "(p90, today's shard times scaled); each shard fewer saves one setup of 38 min (median). The jobs' timeout is "
        "set in `./.github/workflows/_rocm-test.yml`, which foldbot does not read: weigh these against it, and change "
        "the list by hand",
    ]


def test_a_timeout_the_caller_passes_names_the_count() -> None:
    history = runs({("default", RUNNER): [60, 50, 40]})
    assert by_hand(lane(entries("default", 3), "      timeout-minutes: 160\n"), history) == [
        "test: `default` runs 3 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 150 min "
        "per run (median), the longest shard 60 min (p90). On 2 the longest would take about 90 min (p90, today's "
        "shard times scaled), within 60% of the 160-min `timeout-minutes` this job passes; each shard fewer saves one "
        "setup of 38 min (median). Set `num_shards: 2` and drop shard 3 of that list by hand"]
    assert by_hand(lane(entries("default", 3), "      timeout-minutes: 100\n"), history) == [
        "test: `default` runs 3 shards (`num_shards` in `build`'s `test-matrix`); over 3 runs its tests took 150 min "
        "per run (median), the longest shard 60 min (p90). 3 shards are needed: on 2 the longest would take about "
        "90 min (p90), over 60% of the 100-min `timeout-minutes` this job passes"]
    assert by_hand(lane(entries("default", 4), "      timeout-minutes: 200\n"), runs({("default", RUNNER): [40] * 4}))[0] \
        .endswith("On 2 the longest would take about 80 min (p90, today's shard times scaled), within 60% of the "
                  "200-min `timeout-minutes` this job passes; each shard fewer saves one setup of 38 min (median). Set "
                  "`num_shards: 2` and drop shards 3-4 of that list by hand")


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
    assert ("**Shards to trim by hand** (measured; foldbot does not edit these lists)\n\n"
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
