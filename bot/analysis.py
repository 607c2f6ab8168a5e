"""One analysis, end to end in memory: lane files and run bundles in, a verified-as-data
plan and patch out. The CLI and the webhook handlers both call `analyze`.

Pure: the caller reads files and bundles; `bot.verify` does the checks that need
other programs (git apply, schema, actionlint).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .config import RepoConfig
from .edit import EditError, FileEdit, FoldEdit, VerificationError, LaneChange, ReshardEdit, apply_change, patch_id, unified_diff, verify_edit
from .logs import ShardLog
from .plan import Fold, Lane, Plan, Planner, partition_step, shard_axis
from .timing import BundleError, JobMatcher, JobStats, RunTiming, job_stats, run_timing, workflow_path_of
from .workflow import Workflow, parse_workflow


class AnalysisError(ValueError):
    """Inputs that cannot be analysed together; the message says which and why."""


@dataclass(frozen=True)
class LaneResult:
    lane: Lane
    change: LaneChange
    edit: FileEdit | None
    carried: int  # how many of the plan's suggestions this lane takes


@dataclass(frozen=True)
class Analysis:
    lane: Lane  # the measured lane
    runs: tuple[RunTiming, ...]
    stats: dict[str, JobStats]
    plan: Plan
    lanes: tuple[LaneResult, ...]
    patch: str
    patch_id: str | None
    warnings: tuple[str, ...] = field(default=())

    @property
    def edits(self) -> list[FileEdit]:
        return [r.edit for r in self.lanes if r.edit is not None and r.edit.before != r.edit.after]

    @property
    def latest(self) -> RunTiming:
        return self.runs[-1]


def analyze(
    files: Mapping[str, str],
    bundles: Sequence[Mapping[str, Any]],
    config: RepoConfig,
    logs: Mapping[int, ShardLog] | None = None,
) -> Analysis:
    """Analyse the runs of one lane and plan changes for every lane in `files`.

    `files` maps repo-relative paths of the lane workflow files to their text;
    `bundles` are run bundles of one of them, oldest first; `logs` maps API job ids
    to parsed job logs."""
    if not bundles:
        raise AnalysisError("no run bundles given")
    paths = {workflow_path_of(b, f"bundle {i + 1}") for i, b in enumerate(bundles)}
    if len(paths) > 1:
        raise AnalysisError(f"the bundles come from several workflows ({', '.join(sorted(paths))}); give one workflow's runs")
    measured_path = paths.pop()
    if measured_path not in files:
        raise AnalysisError(f"the runs are of {measured_path}, which is not among the lane files ({', '.join(sorted(files)) or 'none'})")
    workflows = {path: parse_workflow(text, path) for path, text in files.items()}
    measured = Lane.of(workflows[measured_path])
    runs: dict[int, RunTiming] = {}
    matcher = JobMatcher(measured.workflow)
    for i, bundle in enumerate(bundles):
        run = run_timing(bundle, measured.workflow, config, f"bundle {i + 1}", matcher)
        runs[run.run_id] = run  # a run given twice counts once
    ordered = tuple(runs.values())
    stats = job_stats(ordered)
    plan = Planner(measured, list(ordered), stats, config, dict(logs or {})).plan()
    lane_results: list[LaneResult] = []
    warnings: list[str] = []
    others = sorted(p for p in workflows if p != measured_path)
    for path in [measured_path, *others]:
        lane = Lane.of(workflows[path])
        change, carried, lane_warnings = _lane_change(plan, measured, lane, config)
        warnings.extend(lane_warnings)
        edit = None
        if not change.empty:
            try:
                edit = apply_change(lane.workflow, change, config)
                verify_edit(lane.workflow, change, edit, config)
            except (EditError, VerificationError) as exc:
                warnings.append(f"{path}: no patch for this file: {exc}")
                edit = None
            else:
                warnings.extend(edit.warnings)
        lane_results.append(LaneResult(lane, change, edit, carried))
    edits = [r.edit for r in lane_results if r.edit is not None]
    patch = unified_diff(edits)
    return Analysis(
        lane=measured,
        runs=ordered,
        stats=stats,
        plan=plan,
        lanes=tuple(lane_results),
        patch=patch,
        patch_id=patch_id(patch) if patch else None,
        warnings=tuple(warnings),
    )


def fold_comment(fold: Fold) -> tuple[str, ...]:
    """The YAML comment above a folded step: the measured numbers behind it."""
    return (
        f"foldbot: moved here from a job of its own, which spent {fold.suite_setup_median_s / 60:.0f} min on setup",
        f"for {fold.suite_test_median_s / 60:.0f} min of tests (median of {fold.samples} runs; p90 {fold.suite_test_p90_s / 60:.1f} min).",
        f"Runs on shard {fold.shard_value} only, and after a failure above too, so that cannot hide it.",
        f"Timeout {fold.timeout_note}.",
    )


def _lane_change(plan: Plan, source: Lane, target: Lane, config: RepoConfig) -> tuple[LaneChange, int, list[str]]:
    """The plan in the target lane's job ids; suggestions the lane cannot take are warned about."""
    folds: list[FoldEdit] = []
    reshards: list[ReshardEdit] = []
    warnings: list[str] = []
    same = target.path == source.path
    checker = Planner(target, [], {}, config)
    for fold in plan.folds:
        suite_id = target.job_id(source.base_id(fold.job))
        host_id = target.job_id(source.base_id(fold.into))
        if suite_id is None or host_id is None:
            warnings.append(f"{target.path}: has no `{source.base_id(fold.job)}` or `{source.base_id(fold.into)}` job; the fold is not carried there")
            continue
        if not same:
            why = checker._host_mismatch(target.workflow.jobs[suite_id], target.workflow.jobs[host_id])
            if why:
                warnings.append(f"{target.path}: `{suite_id}` is not folded into `{host_id}` there: `{host_id}` {why}")
                continue
        axis = shard_axis(target.workflow.jobs[host_id])
        assert axis is not None
        folds.append(FoldEdit(suite_id, host_id, axis[0], axis[1][0], fold.timeout_minutes, fold_comment(fold)))
    for reshard in plan.reshards:
        job_id = target.job_id(source.base_id(reshard.job))
        if job_id is None:
            warnings.append(f"{target.path}: has no `{source.base_id(reshard.job)}` job; the reshard is not carried there")
            continue
        job = target.workflow.jobs[job_id]
        axis = shard_axis(job)
        if axis is None or len(axis[1]) != reshard.from_count or partition_step(job, reshard.from_count) is None:
            warnings.append(f"{target.path}: `{job_id}` does not have {reshard.from_count} shards with a `{reshard.flag}` count; not resharded there")
            continue
        reshards.append(ReshardEdit(job_id, axis[0], reshard.from_count, reshard.to_count, reshard.flag))
    carried = len(folds) + len(reshards)
    return LaneChange(target.path, tuple(folds), tuple(reshards)), carried, warnings


def lane_savings(analysis: Analysis) -> list[dict[str, Any]]:
    """Setup cycles and runner-hours saved per run of each lane (measured numbers
    of the measured lane stand in for the others)."""
    out = []
    for result in analysis.lanes:
        cycles, seconds = 0, 0.0
        source = analysis.lane
        for fold in result.change.folds:
            match = next(f for f in analysis.plan.folds if source.base_id(f.job) == result.lane.base_id(fold.suite))
            cycles += match.setup_cycles_saved
            seconds += match.runner_seconds_saved
        for reshard in result.change.reshards:
            match_r = next(r for r in analysis.plan.reshards if source.base_id(r.job) == result.lane.base_id(reshard.job))
            cycles += match_r.setup_cycles_saved
            seconds += match_r.runner_seconds_saved
        out.append({
            "lane": result.lane.name,
            "path": result.lane.path,
            "measured": result.lane.path == analysis.lane.path,
            "setup_cycles": cycles,
            "runner_hours": round(seconds / 3600, 2),
        })
    return out


__all__ = ["Analysis", "AnalysisError", "BundleError", "LaneResult", "analyze", "lane_savings", "Workflow"]
