"""One analysis, end to end in memory: lane files and run bundles in, a verified-as-data
plan and patch out. The CLI and the webhook handlers both call `analyze`.

Pure: the caller reads files and bundles; `bot.verify` does the checks that need
other programs (git apply, schema, actionlint).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Collection, Mapping, Sequence

from .config import COMBINED_TEST, DEFAULT_STEP_RULES, RepoConfig, bare_name
from .edit import (EditError, FileEdit, FoldEdit, LaneChange, ListEdit, ListTrimEdit, ReshardEdit, VerificationError, apply_change,
                   patch_id, unified_diff, verify_edit)
from .logs import ShardLog
from .plan import (CutOff, Fold, Lane, Plan, Planner, ShardGroup, caps, count_elsewhere, list_limit, other_readers, partition_step,
                   passed_shards, read_limits, shard_axis, shared_list, spoken_list, stage_partitions, tests_limit)
from .timing import (BundleError, JobMatcher, JobStats, JobTiming, RunTiming, called_stats, declared_amd, job_stats,
                     run_timing, runs_on_items, workflow_path_of)
from .workflow import (DEFAULT_JOB_TIMEOUT_MINUTES, TEST_LINE_PATTERN, JobDef, Workflow, WorkflowError, blank_quotes,
                       expression_parts, fills, parse_workflow, runs_tests, timeout_minutes)


class AnalysisError(ValueError):
    """Inputs that cannot be analysed together; the message says which and why."""


@dataclass(frozen=True)
class LaneResult:
    lane: Lane
    change: LaneChange
    edit: FileEdit | None
    carried: int  # how many of the plan's suggestions this lane takes
    #: The reshards carried here whose shards run in other waves than in the measured lane
    #: (another `max-parallel`): the job's wall clock here, on the measured lane's times.
    walls: tuple["CarriedWall", ...] = ()


@dataclass(frozen=True)
class CarriedWall:
    """A reshard in another lane whose copy of the job runs its shards in other waves."""

    job: str  # the job id in that lane
    measured_job: str  # the measured lane's job id (the `Reshard`)
    max_parallel: int | None
    before_s: float
    after_s: float

    @property
    def later_s(self) -> float:
        return self.after_s - self.before_s


@dataclass(frozen=True)
class Unmeasured:
    """Something foldbot could not measure: what, why, and the config line or action
    that fixes it. Each is a line of the report's "Could not measure" section."""

    subject: str  # a job id, a log file, "AMD jobs", ...
    reason: str
    fix: str


@dataclass(frozen=True)
class SuggestionPatch:
    """One suggestion on its own, in every lane that takes it: approvable alone, so a
    fold can be taken without a reshard that would slow the lane."""

    kind: str  # "fold" | "reshard" | "reshard-neutral" (the count that keeps the lane's wall clock) | "shard-list"
    job: str  # the measured lane's job id
    patch: str
    patch_id: str


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
    unmeasured: tuple[Unmeasured, ...] = field(default=())
    min_samples: int = 3
    #: Each suggestion's own patch, in the plan's order (folds, reshards, shard lists); with a
    #: single suggestion, its patch is the whole patch.
    suggestions: tuple[SuggestionPatch, ...] = field(default=())
    #: Per job that calls a reusable workflow: per job it runs there (`called_job`), its stats
    #: (`stats` pools them as the caller's shards).
    called: dict[str, dict[str, JobStats]] = field(default_factory=dict)

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
    log_problems: Sequence[Unmeasured] = (),
    called: Mapping[str, str] | None = None,
) -> Analysis:
    """Analyse the runs of one lane and plan changes for every lane in `files`.

    `files` maps repo-relative paths of the lane workflow files to their text;
    `bundles` are run bundles of one of them, oldest first; `logs` maps API job ids
    to parsed job logs; `log_problems` are the logs that could not be read (a fetch
    that failed, a file with no times), reported with the rest of what is unmeasured;
    `called` the reusable workflows of the repository that lane jobs call with a shard list
    (`plan.shard_callees`): read for their jobs' timeout, never edited."""
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
    attempts: dict[int, list[int]] = {}
    matcher = JobMatcher(measured.workflow)
    warnings: list[str] = []
    for i, bundle in enumerate(bundles):
        attempt = _attempt(bundle)
        run_id = int((bundle.get("workflow_run") or {}).get("id") or 0)
        seen = attempts.setdefault(run_id, [])
        seen.append(attempt)
        if len(seen) > 1 and attempt < max(seen[:-1]):
            continue  # an older attempt of a run already read: the latest attempt stands
        run = run_timing(bundle, measured.workflow, config, f"bundle {i + 1}", matcher)
        runs.pop(run.run_id, None)  # re-insert: the run keeps its latest place in the order
        runs[run.run_id] = run
    for run_id, seen in attempts.items():
        if len(seen) > 1:
            listed = ", ".join(map(str, sorted(seen)))
            warnings.append(f"run {run_id} was given {len(seen)} times (attempts {listed}); "
                            f"counted once, as attempt {max(seen)}")
    ordered = tuple(runs.values())
    # A run held for a maintainer's approval (a first-time contributor's fork PR) ran no job: it is no run of
    # the lane's to report on, as the App does not (`foldbot fetch` lists it with the completed ones).
    held = [run for run in ordered if run.conclusion == "action_required" and not run.jobs]
    if held and len(held) < len(ordered):
        ordered = tuple(run for run in ordered if run not in held)
        warnings.append(f"{_plural(len(held), 'run')} ({', '.join(str(run.run_id) for run in held)}) "
                        f"{'waits' if len(held) == 1 else 'wait'} for a maintainer's approval and ran no job: left out")
    stats = job_stats(ordered)
    by_called = called_stats(ordered, measured.workflow)
    readable = {**workflows, **_parsed(called or {}, warnings)}  # (a lane may be called too)
    plan = Planner(measured, list(ordered), stats, config, dict(logs or {}), readable, by_called).plan()
    lane_results, lane_warnings = _patch_lanes(plan, measured, workflows, config, readable)
    warnings.extend(lane_warnings)
    edits = [r.edit for r in lane_results if r.edit is not None]
    patch = unified_diff(edits)
    suggestions: list[SuggestionPatch] = []
    only = replace(plan, folds=(), reshards=(), lists=())
    alone = [("fold", f.job, replace(only, folds=(f.alone(),))) for f in plan.folds] + \
            [("reshard", r.job, replace(only, reshards=(r,))) for r in plan.reshards] + \
            [("reshard-neutral", r.job, replace(only, reshards=(r.at_neutral(),)))
             for r in plan.reshards if r.neutral_count] + \
            [("shard-list", listed.job, replace(only, lists=(listed,))) for listed in plan.lists]
    for kind, job, subset in alone:
        if len(alone) == 1 and kind != "reshard-neutral":
            own = patch
        else:
            results, _ = _patch_lanes(subset, measured, workflows, config, readable)
            own = unified_diff([r.edit for r in results if r.edit is not None])
        if own:
            suggestions.append(SuggestionPatch(kind, job, own, patch_id(own)))
    return Analysis(
        lane=measured,
        runs=ordered,
        stats=stats,
        plan=plan,
        lanes=tuple(lane_results),
        patch=patch,
        patch_id=patch_id(patch) if patch else None,
        warnings=tuple(warnings),
        unmeasured=(*unmeasured(measured.workflow, ordered, stats, plan, config, {u.subject for u in log_problems}),
                    *log_problems),
        min_samples=config.min_samples,
        suggestions=tuple(suggestions),
        called=by_called,
    )


def _patch_lanes(plan: Plan, measured: Lane, workflows: Mapping[str, Workflow], config: RepoConfig,
                 called: Mapping[str, Workflow]) -> tuple[list[LaneResult], list[str]]:
    """The plan carried into every lane, each lane's edit verified as data (`called`: the reusable
    workflows the lanes' callers run, read for their jobs' timeout)."""
    results: list[LaneResult] = []
    warnings: list[str] = []
    others = sorted(p for p in workflows if p != measured.path)
    for path in [measured.path, *others]:
        lane = Lane.of(workflows[path])
        change, carried, lane_warnings, walls = _lane_change(plan, measured, lane, config, called)
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
        results.append(LaneResult(lane, change, edit, carried, walls if edit is not None else ()))
    return results, warnings


def _parsed(called: Mapping[str, str], warnings: list[str]) -> dict[str, Workflow]:
    """The called workflows that parse; of one that does not, the warning says so (its jobs'
    timeout is then unknown, and the report says that too)."""
    out = {}
    for path, text in sorted(called.items()):
        try:
            out[path] = parse_workflow(text, path)
        except WorkflowError as exc:
            warnings.append(f"{exc} (read for its jobs' timeouts and the shard counts passed to it, which are then not known)")
    return out


def _attempt(bundle: Mapping[str, Any]) -> int:
    run = bundle.get("workflow_run")
    value = run.get("run_attempt") if isinstance(run, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


#: Labels of GitHub-hosted runners: not counted as AMD, and not worth a line.
_HOSTED = re.compile(r"(?i)^(?:ubuntu|windows|macos)(?:-[\w.-]+)?$|-latest$")
#: The labels GitHub gives every self-hosted runner (`self-hosted`, its OS, its architecture): they say
#: nothing of the machine, so a job on these alone (xformers' ROCm CI on `runs-on: self-hosted`) may be on
#: an AMD GPU that no label names. Such jobs are named, never taken for GitHub-hosted ones.
_GENERIC = re.compile(r"(?i)^(?:self-hosted|linux|windows|macos|x64|x86|arm|arm64)$")


#: A label that names other hardware than an AMD GPU (NVIDIA's and Intel's GPUs, TPUs, Gaudi, a CPU pool):
#: a job on it is known not to be AMD, so it is no gap in what foldbot measured (triton's `nvidia-h100`,
#: pytorch's `linux.g5.4xlarge.nvidia.gpu`, DeepSpeed's `[self-hosted, intel, xpu]`, onnxruntime's `...-AMD-CPU`,
#: the ROCm organisation's CPU build pools `azure-linux-scale-rocm`, `aws-linux-scale-rocm-prod`; sglang's NVIDIA
#: `8-gpu-h20` and `x64-cu13-kernel-tests` (CUDA 13), its `xeon-gnr`; vllm's Ascend `npu-2`, `910b`; pytorch's IBM Z
#: `linux.s390x`; TPUs with a count or version: jax's `linux-x86-ct6e-180-8tpu`, pytorch's `linux.google.tpuv7x.1`).
_OTHER_HARDWARE = re.compile(r"(?i)(?<![a-z0-9])(?:nvidia|cuda|cu1\d\d?|[abh]100|h200?|[bg]b?200|l4|l40s?|t4|a10g?|v100"
                             r"|intel|xpu|xeon|epyc|s390x|ascend|npu|910b"
                             r"|gaudi\d?|hpu|\d*tpu(?:v?\d+[a-z]?)?|cpu|graviton|aarch64|arm64|scale-rocm)(?![a-z0-9])"
                             # pytorch's CPU pools are named by their EC2 size (`linux.2xlarge`, `linux.24xlarge`,
                             # `lf.linux.12xlarge`, `linux.24xl.spr-metal`, `windows.4xlarge.nonephemeral`,
                             # `linux.large`) or, GitHub's larger runners, by Ubuntu version and size
                             # (`linux.24_04.4x`): a dotted label with a size part and no `gpu` part (its GPU
                             # pools say `.nvidia.gpu`, `.rocm.gpu`)
                             r"|^(?!.*\bgpu\b)(?:[\w-]+\.)+(?:\d*xl(?:arge)?|large|\d+x)(?:\.[\w.-]+)?$"
                             # pytorch's OSDC runners: arch, vendor and ISA, vCPUs, GiB, then a GPU if any
                             # (`mt-l-x86iavx512-16-128`, `l-bx86iamx-92-167`, `mt-rel-l-arm64g4-16-62`; with a GPU:
                             # `l-x86aavx2-29-113-a10g`, `mt-l-x86iamx-22-225-h100`, named above)
                             r"|^(?:mt-)?(?:rel-)?l-b?(?:x86|arm64)\w*-\d+-\d+$"
                             # jax's CPU runners, named by their GCP machine (`linux-x86-n4-16`: n4-standard-16,
                             # `windows-x86-n2-64`)
                             r"|^(?:linux|windows)-x86-[nc]\d[a-z]?-\d+$")


#: A label naming an Instinct part or a gfx target: the runner has that GPU.
_GPU_PART = re.compile(r"(?i)(?<![a-z0-9])(?:mi-?\d[\dx]{2}|gfx\d)")


def _own_labels(job: JobTiming) -> list[str]:
    """The labels that say something of the runner: neither GitHub-hosted nor generic self-hosted ones."""
    return [label for label in job.labels if label.strip() and not _GENERIC.match(label) and not _HOSTED.search(label)]


def _on_generic_labels(job: JobTiming) -> bool:
    """Ran on a self-hosted runner that its labels do not describe (`self-hosted`, `Linux`, `X64` only)."""
    labels = [label for label in job.labels if label.strip()]
    return any(label.lower() == "self-hosted" for label in labels) and all(_GENERIC.match(label) for label in labels)


def _listed(jobs: Mapping[str, Sequence[str]], limit: int = 8) -> str:
    """`name` (label, label); ... for at most `limit` jobs, then how many more."""
    listed = "; ".join(f"`{name}` ({', '.join(labels)})" for name, labels in sorted(jobs.items())[:limit])
    return listed + (f" and {len(jobs) - limit} more" if len(jobs) > limit else "")


#: A job is said to be mostly "other" when such steps took more than half its time and at least this
#: many minutes. Its setup share counts setup and test time only, so an unknown test step (pytorch/ao's
#: `Run script in container`, ROCm/flash-attention's `AMD Bench` before the rules knew them) would leave
#: a job of two hours' tests reading "99% setup". SGLang's AMD jobs spend at most about 30% of their time
#: in other steps (sanity checks in the container, uploads), well under half; five minutes keeps a short
#: job's teardown from counting.
_OTHER_DOMINATES_MINUTES = 5.0


def _kill_runs(plan: Plan, job_id: str) -> str:
    """What the runs a file was killed in are to a matrix's count (`Plan.hang_runs`, `kill_fallbacks`, `kill_partials`,
    `kill_retried`), for "Could not measure"'s line of its kills."""
    said = ""
    if taken := plan.hang_runs.get(job_id):
        said += (f": where it ran past the shards' limit and another run ended it, it is taken at its usual time there "
                 f"({_runs(taken)}), as no count keeps such a hang within the limit")
        if fallbacks := plan.kill_fallbacks.get(job_id):
            said += f"; where the run has no whole per-file times even so, its shard times stand in ({_runs(fallbacks)})"
    elif plan.kill_fallbacks.get(job_id) or not (plan.kill_partials.get(job_id) or plan.kill_retried.get(job_id)):
        said += ", so a run with such a file has no whole per-file times and its shard times stand in"
    if retried := plan.kill_retried.get(job_id):
        said += (f"; where a retry ran it to its end, {'that run has' if retried == 1 else 'those runs have'} the "
                 f"retry's time ({_runs(retried)})")
    if lacking := plan.kill_partials.get(job_id):
        said += f"; {_runs(lacking)} of them lacked a shard's job, which no count reads"
    return said


def unmeasured(workflow: Workflow, runs: Sequence[RunTiming], stats: Mapping[str, JobStats], plan: Plan,
               config: RepoConfig, explained: set[str] | frozenset[str] = frozenset()) -> list[Unmeasured]:
    """Every reason the numbers are incomplete, each with the fix. The report lists them,
    so a report that measured nothing cannot read as an all-clear. `explained`: jobs whose
    logs already have a line of their own (why they could not be read)."""
    out: list[Unmeasured] = []
    jobs = [job for run in runs for job in run.jobs]
    amd = [job for job in jobs if job.is_amd]
    labelled = {job.workflow_job for job in jobs if job.labels and job.workflow_job}
    # Jobs on generic self-hosted labels only, by name, with those labels as the first run shows them.
    generic: dict[str, tuple[str, ...]] = {}
    for job in jobs:
        if not job.is_amd and _on_generic_labels(job):
            generic.setdefault(job.workflow_job or job.name, tuple(label for label in job.labels if label.strip()))
    if not amd and jobs and not any(job.labels for job in jobs):  # no job was given a runner: no label to judge by
        conclusions = Counter(str(job.conclusion or job.status or "unknown") for job in jobs)
        seen = ", ".join(f"{count} {conclusion}" for conclusion, count in sorted(conclusions.items()))
        # what the file says of its runners: labels written out (none the pattern matches), or not known before a run
        written = sorted({label for job in workflow.jobs.values() for label in _written_labels(job)
                          if not _HOSTED.search(label) and not _GENERIC.match(label)})
        unknown = [job_id for job_id, job in workflow.jobs.items() if declared_amd(job, config, workflow) is None]
        said = (f"; the file names the runners {', '.join(f'`{label}`' for label in written[:6])}, which "
                "`amd_runner_pattern` does not match" if written else "")
        if unknown:
            said += (f"; the runners of {', '.join(f'`{job_id}`' for job_id in unknown[:4])} are not known before a "
                     "run (an expression, or a reusable workflow's runners)")
        fix = ("wait for a run whose jobs run (their `if:` decides it: one that never holds in this repository, as a "
               "fork's check of `github.repository_owner`, skips them every time); then their labels tell which are AMD "
               "runners")
        if written:
            fix += (f"; if those the file names are AMD GPU runners, set `amd_runner_pattern: "
                    f"'^(?:{'|'.join(re.escape(label) for label in written)})$'` in .github/foldbot.yml")
        out.append(Unmeasured(
            "AMD jobs",
            f"no job of the {_runs(len(runs))} ran on a runner ({_plural(len(jobs), 'job')}: {seen}), so no runner "
            f"label was seen{said}", fix))
    elif not amd and jobs:  # (no job at all, in any run: the lines below say why, by the latest run)
        seen = sorted({label for job in jobs for label in _own_labels(job)})
        shown = ", ".join(seen[:12]) + (f" and {len(seen) - 12} more" if len(seen) > 12 else "") if seen else \
            "only generic self-hosted ones" if generic else "only GitHub-hosted ones"
        reason = f"no job of the {len(runs)} runs ran on a runner that `amd_runner_pattern` matches (labels seen: {shown})"
        fix = "set `amd_runner_pattern: '<regex>'` in .github/foldbot.yml to match your AMD runner labels"
        # the self-hosted jobs on labels of their own that name no other hardware: by name, and a pattern for them
        own: dict[str, set[str]] = {}
        for job in jobs:
            if (labels := _own_labels(job)) and not any(_OTHER_HARDWARE.search(label) for label in labels):
                own.setdefault(job.workflow_job or job.name, set()).update(labels)
        if own:
            candidates = sorted({label for labels in own.values() for label in labels})
            reason += (f"; {_plural(len(own), 'job')} ran on self-hosted labels that name no hardware foldbot knows: "
                       f"{_listed({name: sorted(labels) for name, labels in own.items()})}")
            fix = (f"if those are AMD GPU runners, set `amd_runner_pattern: "
                   f"'^(?:{'|'.join(re.escape(label) for label in candidates)})$'` in .github/foldbot.yml (keep only "
                   "the labels of AMD GPU runners)")
        if generic:
            reason += (f"; {_plural(len(generic), 'job')} ran on generic self-hosted labels that do not name the GPU, "
                       f"so foldbot cannot tell whether they ran on AMD GPUs: {_listed(generic)}")
            fix = (f"{fix}; " if own else "") + (
                f"if {'the jobs on generic labels' if own else 'they'} ran on AMD GPUs, give those runners a label that "
                "names the GPU (such as `mi300` or `gfx942`) and put it in the jobs' `runs-on:`"
                + ("" if own else ", or set `amd_runner_pattern: '<regex>'` in .github/foldbot.yml to match their labels "
                                  "(`'^self-hosted$'` counts every self-hosted job as AMD)"))
        out.append(Unmeasured("AMD jobs", reason, fix))
    else:
        # Jobs whose labels the pattern does not match, unless the labels name other hardware, or the
        # repository set the pattern: then what it leaves out is its decision, not foldbot's guess.
        others: dict[str, set[str]] = {}
        for job in jobs:
            own = _own_labels(job)
            if own and not job.is_amd and not any(_OTHER_HARDWARE.search(label) for label in own):
                others.setdefault(job.workflow_job or job.name, set()).update(own)
        if config.amd_runner_pattern != RepoConfig.amd_runner_pattern:
            others, generic = {}, {}
        # A job on generic labels only is listed with them (README: "listed, never dropped silently"; but for the
        # jobs the repository's own pattern leaves out, cleared above).
        listing = {name: sorted(labels) for name, labels in others.items()}
        listing.update({name: [*labels[:-1], f"{labels[-1]}: generic labels that do not name the GPU"]
                        for name, labels in generic.items() if name not in others})
        if listing:
            fix = "if they are AMD runners, extend `amd_runner_pattern` in .github/foldbot.yml"
            if len(listing) > len(others):
                fix += ("; a pattern cannot pick out a job on generic labels only (`self-hosted`, `Linux`, `X64`): give "
                        "its runner a label that names the GPU and put it in the job's `runs-on:`")
            out.append(Unmeasured(
                "self-hosted jobs not counted",
                f"{_plural(len(listing), 'job')} ran on self-hosted labels that `amd_runner_pattern` does not match: "
                f"{_listed(listing)}",
                fix,
            ))
    for job_id, job in workflow.jobs.items():
        if job.uses or job_id in labelled or declared_amd(job, config, workflow) is not None:
            continue
        out.append(Unmeasured(
            job_id,
            f"`runs-on: {_runs_on_text(job.runs_on)}` is an expression the file does not resolve, and no run of the job was seen",
            "it is measured once a run of it completes; or put the AMD label (or its default, `inputs.x || 'mi300'`) in the "
            "expression, or give the input it reads a `default:`",
        ))
    untested: dict[str, list[JobTiming]] = {}
    untested_runs: dict[str, set[int]] = {}
    tested: set[str] = set()
    stopped_runs: dict[str, set[int]] = {}  # runs where a job failed before its test steps, which were skipped
    measured_as = _measured_as(workflow)
    candidates: list[tuple[int, JobTiming, str]] = []  # the jobs that ran no test step, and their names
    for run in runs:
        for job in run.amd_jobs:
            name = measured_as(job)
            if job.ran_tests:
                tested.add(name)
            else:
                candidates.append((run.run_id, job, name))
    ran_steps: dict[str, set[str]] = {}  # by job: the test steps that ran in some run (or matrix combination)

    def ran_elsewhere(name: str) -> set[str]:
        if name not in ran_steps:
            ran_steps[name] = {s.name for run in runs for job in run.amd_jobs if job.ran_tests and measured_as(job) == name
                               for s in job.work_steps if s.category == "test" and s.conclusion != "skipped"}
        return ran_steps[name]

    for run_id, job, name in candidates:
        # A failed job whose test step is there but did not run (skipped after a failed setup: TheRock's
        # `Test`) is no sample of that run, which is no gap in the rules; the lines below say when no run
        # is left. A job that succeeded ran its tests somewhere: a skipped step named so (`Rerun failed
        # tests`, `if: failure()`) says nothing of the step that did, which the rules do not know; unless
        # that step ran in another of the job's runs or matrix combinations (iree-org/wave's `Test water`,
        # `if: matrix.shared_libs == 'OFF'`; ROCm/ATOM's entry whose every step its `if:` skips on a PR).
        if name in tested and all(s.conclusion == "skipped" or s.category != "test" for s in job.work_steps) and (
                all(s.conclusion == "skipped" for s in job.work_steps)
                or any(s.category == "test" and s.name in ran_elsewhere(name) for s in job.work_steps)):
            continue
        if job.stopped_before_tests:
            stopped_runs.setdefault(name, set()).add(run_id)
        elif job.conclusion not in ("skipped", "cancelled") and job.setup_seconds + job.other_seconds > 0:
            untested.setdefault(name, []).append(job)
            untested_runs.setdefault(name, set()).add(run_id)
    for name, found in sorted(untested.items()):
        # A step the rules do take for a test, which took no time by GitHub's whole-second stamps or
        # had not ended: no rule is missing (a step rule for it would change nothing)
        # (not one skipped: `Rerun failed tests`, `if: failure()`, says nothing of the step that ran)
        tests = {s.name: s for job in found for s in job.work_steps if s.category == "test" and s.conclusion != "skipped"}
        if tests:
            open_ = [step for step in tests if tests[step].conclusion is None]
            shown = ", ".join(f"`{step}`" for step in list(tests)[:3])
            out.append(Unmeasured(
                name,
                f"ran in {_runs(len(untested_runs[name]))}; its test step {shown} "
                + ("had not ended when the run was read (the job was still running)" if open_ else
                   "took 0 s (it ended within a second: GitHub's step times are whole seconds)"),
                "nothing to change in foldbot's rules, which take it for a test; "
                + ("its next completed run is measured" if open_ else
                   "check that the step runs tests (an empty shard, or a suite that found none, ends at once)")))
            continue
        steps: dict[str, float] = {}
        for job in found:
            for step in job.work_steps:
                if step.conclusion != "skipped":  # (a step that did not run is no candidate for a test rule)
                    steps[step.name] = max(steps.get(step.name, 0.0), step.seconds)
        longest = sorted(steps.items(), key=lambda kv: -kv[1])[:3]
        listed = ", ".join(f"`{step}` ({seconds / 60:.0f} min)" for step, seconds in longest)
        example = _name_pattern(workflow, name, longest[0][0]) if longest else "<that step>"
        reason = f"ran in {_runs(len(untested_runs[name]))} but no step is classified as a test; " + (
            f"its longest other steps: {listed}" if longest else
            f"its {max(job.setup_seconds for job in found) / 60:.0f} min were all in setup steps")
        # Its other steps took under a minute (a listing, an upload): the tests ran in a setup step, and one whose
        # name says test is the likeliest (rocm-systems' `Configure, Build, and Test`, which a setup rule took first).
        said = _setup_steps_named_as_tests(workflow, name, config) if not longest or longest[0][1] < 60 else []
        if said:
            reason += f"; classified as setup although the name says test: {', '.join(f'`{s}`' for s in said)}"
            example = _name_pattern(workflow, name, said[-1])
        fix = f"add {_step_rule(example)} to .github/foldbot.yml"
        if not said:  # maybe no tests at all: a build (of an image on the GPU runner: Megatron-LM), or no GPU
            labels = sorted({label for job in found for label in job.labels})
            on = f" ({', '.join(f'`{label}`' for label in labels)})" if labels else ""
            # (a label naming the GPU itself, `mi325`, `gfx942`, leaves no doubt of that)
            no_gpu = "" if any(_GPU_PART.search(label) for label in labels) else (
                f"; if its runner{on} has no GPU though a label looks AMD, narrow `amd_runner_pattern` so that it does "
                "not match")
            fix = (f"if one of its steps runs tests, {fix}; a job that only builds or prepares (an image, artifacts) "
                   f"has no tests, and its time is setup{no_gpu}" if not longest else
                   f"{fix} if that step runs tests; a job that only builds or prepares (an image, artifacts) has no "
                   f"tests{no_gpu}")
        out.append(Unmeasured(name, reason, fix))
    # ... and when no run is left (Primus-Turbo's `Install and build` failing before its tests: the job was a "short
    # suite" of 0 min), while other jobs have samples (else one line says that no AMD job ran a test step: below)
    stopped_only = {name: found for name, found in stopped_runs.items() if name not in tested and name not in untested
                    and any(s.samples for s in stats.values())}
    for name, found in sorted(stopped_only.items()):
        out.append(Unmeasured(
            name,
            f"failed before its tests in {_runs(len(found))} (its test steps were skipped there), and no run of the "
            f"{len(runs)} read ran them: how long its tests take is not known",
            "see on the runs' pages which step failed (a build or an install); the next run that reaches its tests is "
            "measured"))
    out += _mostly_other(runs, set(untested), workflow, config, measured_as)
    out += _combined(runs, workflow, config)
    ambiguous: dict[str, tuple[str, ...]] = {}
    for job in jobs:
        # (one on other runners needs no measuring: its labels say so, or, a job that did not run, its file's `runs-on`)
        elsewhere = (not job.is_amd) if job.labels else all(
            (defined := workflow.jobs.get(i)) is not None and declared_amd(defined, config, workflow) is False
            for i in job.ref.ambiguous)
        # (a job skipped, or cancelled while it waited for a runner, has no time to count: nod-ai/shark-ai's)
        if job.ref.ambiguous and not elsewhere and job.setup_seconds + job.test_seconds + job.other_seconds > 0:
            ambiguous.setdefault(job.name, job.ref.ambiguous)
    for name, ids in sorted(ambiguous.items()):
        out.append(Unmeasured(
            name,
            f"fits the jobs {', '.join(f'`{i}`' for i in ids)} equally (one rendered name, and neither steps nor labels tell them apart); not counted",
            "give the jobs distinct `name:`s",
        ))
    unmapped = _unmapped(workflow, amd)
    out += unmapped
    # The report's "no AMD test time" (of the runs, or of the latest) points at this section: a line says why, unless
    # the lines above say it of each of those jobs (no step classified as a test, a name that fits two jobs or none)
    # (Primus-Turbo: a PR run its label gate skipped all but a lint job of had no line, as the history's build-only
    # job on the GPU runners had one of its own)
    def unsaid(timings: Sequence[JobTiming]) -> bool:
        return not timings or any(measured_as(job) not in untested and measured_as(job) not in stopped_only
                                  and job.name not in ambiguous
                                  and (job.workflow_job is not None or job.ref.ambiguous) for job in timings)

    if amd or not jobs:
        if amd and not any(s.samples for s in stats.values()):
            if unsaid(amd):
                out.append(_no_test_ran(amd, f"the {_runs(len(runs))}", workflow))
        elif not runs[-1].jobs and runs[-1].conclusion == "cancelled":  # cancelled while it waited: no file problem
            out.append(Unmeasured(
                "AMD test time",
                f"the latest run ({runs[-1].run_id}, of `{runs[-1].head_sha[:12]}`) was cancelled before GitHub started "
                "any job (a newer run of its concurrency group replaced it, or someone cancelled it)",
                _wait_for_a_run(workflow)))
        elif not runs[-1].jobs and runs[-1].conclusion == "action_required":
            out.append(Unmeasured(
                "AMD test time",
                f"the latest run ({runs[-1].run_id}, of `{runs[-1].head_sha[:12]}`) waits for a maintainer's approval to "
                "run (GitHub holds the runs of a first-time contributor's fork pull request): no job ran yet",
                "a maintainer approves it on the run's page (\u201cApprove and run\u201d); its report follows when it completes"))
        elif not runs[-1].jobs:  # GitHub started none: what it does with a workflow file it cannot read
            out.append(Unmeasured(
                "AMD test time",
                f"the latest run ({runs[-1].run_id}, of `{runs[-1].head_sha[:12]}`) has no job at all: GitHub "
                "started none, as it does when the workflow file at the run's commit is invalid (its page says why)",
                f"fix `{runs[-1].workflow_path}` at that commit (a pull request's own version of it), then push"))
        elif not runs[-1].total("test_seconds") and unsaid(runs[-1].amd_jobs):
            out.append(_no_test_ran(runs[-1].amd_jobs, f"the latest run ({runs[-1].run_id})", workflow))
    # Runs whose AMD jobs all skipped (a label- or path-gated lane: ROCm/xla's nightly runs on every PR label event)
    # are no samples: with few runs that tested, the figures rest on too few.
    # (only when as many runs were read as `history_runs` asks, fewer than the most it takes: else there are no more)
    idle = [run for run in runs if gated(run, stats)]
    most = max((s.samples for s in stats.values()), default=0)
    if idle and 0 < most < config.min_samples and config.history_runs <= len(runs) and config.history_runs < 100:
        out.append(Unmeasured(
            "history",
            f"{_plural(len(idle), 'run')} of the {len(runs)} read skipped all their AMD jobs (a gate, a label or a "
            f"path filter), so no job has more than {_plural(most, 'sample')}, fewer than `min_samples` "
            f"({config.min_samples})",
            f"read more runs: `history_runs: {min(100, config.history_runs * 2)}` in .github/foldbot.yml (the App reads "
            f"{config.history_runs}), or more runs to `foldbot analyze`"))
    for job_id, log_runs in plan.reshard_candidates.items():
        if job_id in explained:
            continue  # its logs have a line of their own: why they could not be read
        if job_id in plan.misplaced_logs:
            misplaced = plan.misplaced_logs[job_id]
            out.append(Unmeasured(
                job_id,
                f"shard logs that are not their job's, by their header: {'; '.join(misplaced[:3])}"
                + (f" (and {len(misplaced) - 3} more)" if len(misplaced) > 3 else "")
                + "; those runs' per-file times are not used, so shard times stand in",
                "give each job its own shard's log (`--logs JOB_ID=FILE`: the `id` of the job whose name carries "
                "that shard, of this matrix: a log of another suite is another matrix's job's); if they are the jobs' "
                "own logs, the test command's partition id (or `--suite`) is not the matrix's",
            ))
        if job_id in plan.partial_logs:  # (beside misplaced logs: each run's own reason)
            out.append(Unmeasured(
                job_id,
                f"per-file times need every shard's log of a run; read {', '.join(plan.partial_logs[job_id])} shards' logs, "
                "so shard times stand in",
                "let the App read all its shard logs (`logs: {max_jobs: N}` in .github/foldbot.yml), or pass each shard with `--logs JOB_ID=FILE`",
            ))
        if job_id in plan.cut_off:  # (beside the lines above: a run's kill is said whatever another run's logs were)
            cut = sorted((c for c in plan.cut_off[job_id] if not c.killed), key=lambda c: -c.runs)
            named = ", ".join(f"`{c.file}` (in {_runs(c.runs)}" + (
                f", after {c.at_least_s / 60:.0f} min or more" if c.at_least_s is not None else "") + ")" for c in cut[:3])
            if cut:
                out.append(Unmeasured(
                    job_id,
                    f"its logs were read, but a test file had not ended when its step stopped (the step's timeout, or a "
                    f"cancel): {named}{f' and {len(cut) - 3} more' if len(cut) > 3 else ''}; a run with such a file has no "
                    "whole per-file times, so its shard times stand in, and they stop where the file was cut off",
                    "give that file the time it needs: raise the test step's `timeout-minutes`, or split the file; the runs "
                    "after that are read file by file",
                ))
            # SGLang's runner kills a file at its `--timeout-per-file` and records that cap as the file's
            # `elapsed`: a hung test, whose time is not known, not a step that ran out of time.
            killed = sorted((c for c in plan.cut_off[job_id] if c.killed), key=lambda c: -c.runs)
            named = ", ".join(f"`{c.file}` (in {_runs(c.runs)}, killed after {c.at_least_s / 60:.0f} min)"  # type: ignore[operator]
                              for c in killed[:3])
            if killed:
                out.append(Unmeasured(
                    job_id,
                    (f"its logs were read, but {caps(killed)} killed a test file: {named}"
                     if any(c.by != CutOff.by for c in killed) else
                     f"its logs were read, but the test runner killed a test file at its `--timeout-per-file`: {named}")
                    + f"{f' and {len(killed) - 3} more' if len(killed) > 3 else ''}; the runner records that cap as the "
                    "file's time, which is only how long it ran at least" + _kill_runs(plan, job_id),
                    f"find why the test hangs and fix it; if it only needs longer, raise {caps(killed)} or split the "
                    "file; the runs after that are read file by file",
                ))
        if job_id not in plan.misplaced_logs and job_id not in plan.partial_logs and job_id not in plan.cut_off \
                and job_id in stats and not log_runs:
            out.append(Unmeasured(
                job_id,
                "no per-file test times read from its logs: the shard count rests on shard times, which assume today's split",
                ("the App reads its shard logs by itself (`logs: {fetch: true}`, the default)" if config.logs_fetch
                 else "set `logs: {fetch: true}` in .github/foldbot.yml so that the App reads its shard logs")
                + "; on the command line, `foldbot analyze --repo` fetches them, or pass each shard's log with "
                  "`--logs JOB_ID=FILE`",
            ))
    if len(runs) < config.min_samples:
        out.append(Unmeasured(
            "history",
            f"{_runs(len(runs))} read; a suggestion needs {config.min_samples} to be more than provisional",
            "wait for more completed runs, or lower `min_samples:` in .github/foldbot.yml",
        ))
    return out


def _written_labels(job: JobDef) -> list[str]:
    """The labels a job's `runs-on` writes out (not those an expression gives), a group as `group:<name>`."""
    return [item for item in runs_on_items(job.runs_on) if isinstance(item, str) and item.strip() and "${{" not in item]


def _setup_steps_named_as_tests(workflow: Workflow, job_id: str, config: RepoConfig) -> list[str]:
    """The steps of the file's job that a rule classifies as setup but a test rule would match by name
    (`Configure, Build, and Test`: `configure` wins first), in the file's order."""
    job = workflow.jobs.get(job_id)
    tests = [rule for rule in config.step_rules if rule.category == "test"]
    return [step.name for step in (job.steps if job else ()) if config.step_category(step) == "setup"
            and any(rule.matches(step.name) for rule in tests)]


def _step_rule(pattern: str) -> str:
    """A step rule for a step's name, as inline code to paste into .github/foldbot.yml: the pattern single-quoted as
    YAML reads it (a `'` in the name doubled: `Run python infer.py --model 'llama'`), a backtick in it matched by `.`
    (no code span holds one)."""
    quoted = pattern.replace("`", ".").replace("'", "''")
    return f"`step_rules: [{{pattern: '^{quoted}$', category: test}}]`"


def _name_pattern(workflow: Workflow, job_id: str, shown: str) -> str:
    """A step rule's pattern for a step as GitHub shows it (`shown`): its name as the file writes it
    when that has expressions (`Run new examples with ${{ matrix.num_ranks }} ranks`), each one
    `.*`, so that one rule takes every matrix entry's step; else the name itself: for a name another
    step has as it is, and where the `.*` would take a step of the file's that the name is not (`Run
    ${{ matrix.model }}` would take `Run actions/checkout@v4`: a rule is the repository's, for every
    job)."""
    return _name_rule_part(workflow, job_id, shown)[0]


def _name_rule_part(workflow: Workflow, job_id: str, shown: str) -> tuple[str, str]:
    """`_name_pattern`, and the name it stands for: as written where it has expressions, else `shown`."""
    job = workflow.jobs.get(job_id)
    steps = job.steps if job else ()
    if any(step.name == shown for step in steps):
        return re.escape(shown), shown
    for step in steps:
        written = step.explicit_name
        if written and len(parts := expression_parts(written)) > 1 and fills(parts, shown):
            pattern = ".*".join(map(re.escape, parts))
            others = (other.name for each in workflow.jobs.values() for other in each.steps
                      if other is not step and "${{" not in other.name)
            # (as the rule reads a name: from its start, and past its emoji, review147 z05; read by `fills`, whose
            # str.find goes once: the pattern's `.*`s tried a power of the name's length, 200 characters past 60 s)
            if any(fills(parts, other) or fills(parts, bare_name(other)) for other in others):
                break
            return pattern, written
    return re.escape(shown), shown


def _measured_as(workflow: Workflow) -> Callable[[JobTiming], str]:
    """What a line of "Could not measure" names an API job by: its workflow job (else its name);
    of a caller of a reusable workflow, the job it runs there (`called_job`): one that only checks
    the runner beside others that test (transformers' `Check Runners`) is that job's gap, not the
    caller's."""
    def name(job: JobTiming) -> str:
        return f"{job.workflow_job} / {job.called}" if job.called else job.workflow_job or job.name
    return name


#: The most steps the fix of a job "mostly other" names in the rule it suggests.
_RULE_STEPS = 8


def _mostly_other(runs: Sequence[RunTiming], untested: set[str], workflow: Workflow, config: RepoConfig,
                  measured_as: Callable[[JobTiming], str]) -> list[Unmeasured]:
    """A line per AMD job that ran tests but spent most of its time in steps classified other
    (neither setup nor test), naming those steps: its setup share leaves that time out, and the
    likeliest cause is a test (or setup) step the rules do not know. Its fix is one rule for all
    such steps of a minute or more that no rule takes, the longest first (tinygrad's benchmark job: `Run LLaMA`, `Run
    GPT2`, `Run Stable Diffusion`, ...), so that one edit measures the job; else for its longest.
    Jobs with no test step at all have a line of their own (`untested`)."""
    found: dict[str, dict[int, JobTiming]] = {}
    for run in runs:
        for job in run.amd_jobs:
            name = measured_as(job)
            if name in untested or job.conclusion in ("skipped", "cancelled"):
                continue
            if job.other_seconds >= _OTHER_DOMINATES_MINUTES * 60 and job.other_seconds > job.setup_seconds + job.test_seconds:
                worst = found.setdefault(name, {}).get(run.run_id)
                if worst is None or job.other_seconds > worst.other_seconds:
                    found[name][run.run_id] = job  # a matrix's shards: the one with the most other time
    out = []
    for name, by_run in sorted(found.items()):
        steps: dict[str, float] = {}
        for job in by_run.values():
            for step in job.work_steps:
                if step.category == "other":
                    steps[step.name] = max(steps.get(step.name, 0.0), step.seconds)
        by_time = sorted(steps.items(), key=lambda kv: -kv[1])
        listed = ", ".join(f"`{step}` ({seconds / 60:.0f} min)" for step, seconds in by_time[:3])
        worst = max(by_run.values(), key=lambda job: job.other_seconds)
        total = worst.setup_seconds + worst.test_seconds + worst.other_seconds
        # (a step of seconds does not change the share: no word of it in the rule, where steps of a minute are; the
        # steps of one name as written, shown with each matrix value, are one pattern, named as written; a step a rule
        # says is other only where those no rule takes are not a minute together, review147 z03, review148 a05)
        patterns: dict[str, str] = {}
        no_rule = [(step, seconds) for step, seconds in by_time if config.rule_for(step) is None]
        for step in [step for step, seconds in no_rule if seconds >= 60] \
                or [step for step, _ in no_rule if sum(seconds for _, seconds in no_rule) >= 60] or [by_time[0][0]]:
            pattern, written = _name_rule_part(workflow, name, step)
            patterns.setdefault(pattern, written)
        left = len(patterns) - _RULE_STEPS
        patterns = dict(list(patterns.items())[:_RULE_STEPS])
        unruled = list(patterns.values())
        rule = _step_rule(next(iter(patterns)) if len(patterns) == 1 else f"(?:{'|'.join(patterns)})")
        out.append(Unmeasured(
            name,
            f"in {_runs(len(by_run))}, steps classified as neither setup nor test took more than half its time (up to "
            f"{worst.other_seconds / 60:.0f} of {total / 60:.0f} min), which its setup share leaves out; its longest "
            f"such steps: {listed}",
            f"if `{unruled[0]}` runs tests, add {rule} to .github/foldbot.yml (`category: setup` if it prepares the "
            "machine)" if len(unruled) == 1 else
            f"if {spoken_list([f'`{step}`' for step in unruled])} run tests, add {rule} to .github/foldbot.yml, which "
            "takes them all (leave out of its pattern any that does not; a rule with `category: setup` for those that "
            "prepare the machine)" + (f"; {left} shorter such step{'s' if left > 1 else ''} no rule takes "
                                      f"{'are' if left > 1 else 'is'} not in it" if left > 0 else ""),
        ))
    return out


#: A test step's name that says it builds too: jax's `Bazel ROCm tests with build_jax=true, build_jaxlib=true`.
_BUILDS_TOO = re.compile(r"(?i)(?<![\w-])build[\w-]*\s*=\s*(?:true|yes|1)\b")  # (not `no-build=true`)


def _combined(runs: Sequence[RunTiming], workflow: Workflow, config: RepoConfig) -> list[Unmeasured]:
    """A line per AMD job with a step that sets up and tests in one (`Build and run tests`, a minute or
    more): counted as test by the default rule `COMBINED_TEST`, or by another default test rule while
    its name says it builds (`_BUILDS_TOO`), the setup in it is not seen. A rule of the repository's
    own that takes the step says it has been looked at: no line."""
    found: dict[str, dict[str, float]] = {}
    combined: dict[str, bool] = {}  # by step name (a name is read once, not once a job and run)

    def sets_up_too(name: str) -> bool:
        if name not in combined:
            rule = config.rule_for(name)
            combined[name] = rule is not None and rule.category == "test" and (
                rule is COMBINED_TEST or (rule in DEFAULT_STEP_RULES and _BUILDS_TOO.search(name) is not None))
        return combined[name]

    installs = {job_id: found_install for job_id, raw in (workflow.data.get("jobs") or {}).items()
                if isinstance(raw, dict) and (found_install := _script_installs(raw))}
    # a test step's own `run:` that installs before its tests (ROCm/apex's `Run Tests`: apt-get, a venv, the torch and
    # apex wheels pip-installed in a fresh container, then the tests): by job, the step's name as GitHub shows it
    own: dict[str, list[tuple[tuple[str, ...], str]]] = {}

    def installs_in(job_id: str) -> list[tuple[tuple[str, ...], str]]:
        if job_id not in own:
            job = workflow.jobs.get(job_id)
            own[job_id] = [(expression_parts(step.name), found_install) for step in (job.steps if job else ())
                           if step.run and config.step_category(step) == "test" and (found_install := _installs(step.run))]
        return own[job_id]
    scripts: dict[tuple[str, str], str] = {}  # (a caller's job, step) -> what its `script:` installs before its tests
    written: dict[tuple[str, str], str] = {}  # (a job, its test step) -> what the step's `run:` installs before them
    kinds: dict[str, tuple[bool, bool, bool]] = {}  # by step name: a default rule takes it; a script step; combined
    for run in runs:
        for job in run.amd_jobs:
            job_id = job.workflow_job or ""
            for step in job.work_steps:
                if step.category != "test" or step.seconds < 60:
                    continue
                kind = kinds.get(step.name)
                if kind is None:  # (a rule of the repository's own takes it: looked at, no line; none, its commands)
                    rule = config.rule_for(step.name)
                    ours = rule is None or id(rule) in _DEFAULT_RULES
                    kind = kinds[step.name] = (ours, ours and _SCRIPT_STEP.fullmatch(step.name) is not None,
                                               sets_up_too(step.name))
                passed = installs.get(job_id) if kind[1] else None
                runs_it = next((line for parts, line in installs_in(job_id) if fills(parts, step.name)), None) \
                    if kind[0] and not passed else None
                if passed or runs_it or kind[2]:
                    name = job.workflow_job or job.name
                    steps = found.setdefault(name, {})
                    steps[step.name] = max(steps.get(step.name, 0.0), step.seconds)
                    if passed:
                        scripts[name, step.name] = passed
                    elif runs_it:
                        written[name, step.name] = runs_it
    out = []
    for name, steps in sorted(found.items()):
        step, seconds = max(steps.items(), key=lambda kv: kv[1])
        others = f" (and {len(steps) - 1} more such step{'s' if len(steps) > 2 else ''})" if len(steps) > 1 else ""
        job = workflow.jobs.get(name)
        how = (f"runs the `script:` this job passes `{job.uses if job else 'its reusable workflow'}`, which installs "
               f"before its tests (`{scripts[name, step]}`)" if (name, step) in scripts else
               f"installs before its tests (`{written[name, step]}`)" if (name, step) in written else
               "sets up and tests in one step")
        out.append(Unmeasured(
            name,
            f"its step `{step}` (up to {seconds / 60:.0f} min){others} {how}: foldbot counts it "
            "all as test, so the setup in it (a build, an install) is not measured and the job's setup share reads low",
            ("install that in the job's image (the `docker-image:` it passes), and the step runs the tests alone"
             if (name, step) in scripts else "split it into a setup step and a test step, and each is measured")
            + "; or, to count it as test as it is and "
            f"drop this line, add {_step_rule(_name_pattern(workflow, name, step))} to .github/foldbot.yml"))
    return out


#: The default step rules, by identity (a rule of the repository's own may equal one and is still its own).
_DEFAULT_RULES = frozenset(map(id, DEFAULT_STEP_RULES))
#: The step of pytorch/test-infra's `linux_job_v2.yml` that runs its caller's `script:` (torchtitan's ROCm lane).
_SCRIPT_STEP = re.compile(r"(?i)run (?:the )?script (?:in|inside|outside(?: of)?) (?:the |a )?container")
#: A line of a script that installs or builds: pip, uv, conda, a system package manager, setup.py, an install script;
#: or pulls an image. After other commands on the line too (`if ! pip show x; then pip install x; fi`), so a word of
#: it stops at `;`, `&` and `|` (read on, each of the line's commands tried read the rest of the line).
_INSTALL_LINE = re.compile(r"(?im)^(?P<before>(?:[^\n;&|]*(?:&&|\|\||;))*)[ \t]*(?:(?:then|do|else)[ \t]+)?"
                           r"(?:\w+=[^\s;&|]*[ \t]+)*(?:(?:python3?[ \t]+-m[ \t]+)?(?:pip3?|uv[ \t]+pip|conda|mamba"
                           r"|micromamba|apt(?:-get)?|dnf|yum)[ \t]+install\b|python3?[ \t]+setup\.py[ \t]+(?:install|develop)"
                           r"|(?:bash|sh)[ \t]+[^\s;&|]*install[^\s;&|]*|(?:sudo[ \t]+)?docker[ \t]+pull\b)[^\n]*")


#: A line of a script that runs tests (`TEST_LINE_PATTERN`: what `RUNS_TESTS` takes, and any script whose path says
#: test), after shell set-up on it (`cd tests && pytest`, `set -e; pytest`, `...; fi; pytest`), a condition or a loop
#: (`if [ -d t ]; then pytest`, `for t in a b; do pytest $t`), or as one (`if ! pytest ...; then`): pytest,
#: unittest, ctest, tox/nox, `make test|check`, a test script (apex's `bash tests/jit_build/run_tests.sh`; not a `cat >
#: run_tests.sh` that writes one, nor `install_test_deps.sh`, `pytest --version` or `make test-deps`). (A heredoc's
#: lines are read as the script's own.)
_TEST_LINE = re.compile(r"(?im)^(?:[ \t]*(?:(?:then|do|else)[ \t]+)?(?:(?:cd|pushd|export|set|source|if|elif|while|until"
                        r"|for|fi|done)\b|\.(?=[ \t])|\[)[^\n;&|]*(?:&&|;))*"
                        r"(?:[ \t]*(?:then|do|else|(?:(?:if|elif|while|until)[ \t]+)?!|if|elif|while|until)(?=[ \t]))?"
                        + TEST_LINE_PATTERN)
# (the blanks after the keyword are the pattern's own: a `[ \t]+` before its `[ \t]*` read 16,000 blanks in 84 s)


def _script_installs(raw: Mapping[str, Any]) -> str | None:
    """The first line of a caller's `with: script:` that installs (torchtitan's `python -m pip install --pre torch`
    before its tests), cut to 80 characters; None when it installs nothing (or passes no script)."""
    script = (raw.get("with") or {}).get("script") if isinstance(raw.get("with"), dict) else None
    return _installs(script) if isinstance(script, str) else None


def _installs(script: str) -> str | None:
    """The first line of a script that installs or pulls an image (`_INSTALL_LINE`) before its first test command
    (`_TEST_LINE`: an install after the tests, `pip install codecov` for the upload, sets up nothing they need; nor
    one after a test command on its own line, `(cd tests && pytest) && pip install codecov`, review146 y06), cut to
    80 characters; None when it has none. (Read with its quotes blanked: `echo "...; pip install x"` is none.)"""
    first = _TEST_LINE.search(script)
    for found in _INSTALL_LINE.finditer(blank_quotes(script), 0, first.start() if first else len(script)):
        if runs_tests(found.group("before")):
            continue
        line = " ".join(script[found.start():found.end()].split())
        return line if len(line) <= 80 else line[:79] + "\u2026"
    return None




def _unmapped(workflow: Workflow, amd: Sequence[JobTiming]) -> list[Unmeasured]:
    """A line per group of AMD jobs that map to no job of the file (a matrix's or a
    reusable workflow's jobs, named alike up to their ` (values)`, are one group). The
    names are prose (the report escapes it); the subject, shown as code, keeps only word
    characters and ` .,/:-`, so no name's markup reaches the report as it is."""
    groups: dict[str, list[str]] = {}
    for job in amd:
        if job.workflow_job is None and not job.ref.ambiguous:
            names = groups.setdefault(re.sub(r" \([^()]*\)$", "", job.name), [])
            if job.name not in names:
                names.append(job.name)
    out = []
    for group, names in sorted(groups.items()):
        listed = ", ".join(f'"{name}"'.replace("`", "'") for name in names[:4])
        listed += f" and {len(names) - 4} more" if len(names) > 4 else ""
        out.append(Unmeasured(
            re.sub(r"[^\w .,/:-]", "", group),
            f"{_plural(len(names), 'AMD job')} ({listed}) match no job of `{workflow.path}` by `name:` or job id: "
            "their time is in the run's totals but in no job's history, so no suggestion rests on it",
            f"check that `{workflow.path}` is the version these runs used (a job renamed since maps to nothing); foldbot "
            "reads an API job's name as a job's id or `name:` (literal text and `${{ matrix.* }}` values), then the "
            "`(values)` GitHub appends to a matrix job, and a reusable workflow's jobs as `<caller name> / <job>`",
        ))
    return out


def gated(run: RunTiming, measured: Collection[str] = ()) -> bool:
    """Whether a run skipped its AMD jobs, and ran nothing but on GitHub's own runners (its gate, a
    label or path filter): it measured nothing, and nothing is amiss. A skipped job is an AMD one by
    its file's `runs-on`, or when other runs measured its workflow job (`measured`: a reusable
    workflow's caller, whose runners its file does not say: TheRock's `test_components`). (Jobs that
    ran on self-hosted runners the pattern does not match, or no job at all, are a gap to say.)"""
    return any(job.conclusion == "skipped" and (job.is_amd or job.workflow_job in measured) for job in run.jobs) and all(
        job.conclusion == "skipped" or (job.labels and all(_HOSTED.search(label) for label in job.labels))
        for job in run.jobs)


def _wait_for_a_run(workflow: Workflow) -> str:
    """What to do about a run that measured nothing: wait for one that does, which `/dispatch`
    starts only in a workflow a `workflow_dispatch` event runs."""
    lacks = workflow.undispatchable
    return "wait for a run whose AMD jobs run their tests " + (
        f"(`{workflow.path}` has {lacks}, so `/dispatch` cannot start one)" if lacks else
        "(a `/dispatch` comment on a PR starts one)")


def _no_test_ran(amd: Sequence[JobTiming], where: str, workflow: Workflow) -> Unmeasured:
    """Why runs whose AMD jobs all map to jobs hold no test time: none ran a test step."""
    conclusions = Counter(str(job.conclusion or job.status or "unknown") for job in amd)
    seen = ", ".join(f"{count} {conclusion}" for conclusion, count in sorted(conclusions.items()))
    return Unmeasured(
        "AMD test time",
        f"no AMD job of {where} ran a test step ({_plural(len(amd), 'job')}: {seen})" if amd
        else f"{where} ran no AMD job",
        _wait_for_a_run(workflow),
    )


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _runs_on_text(runs_on: Any) -> str:
    text = runs_on if isinstance(runs_on, str) else repr(runs_on)
    return text if len(text) <= 80 else text[:77] + "..."


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def fold_comment(fold: Fold, measured_in: str | None = None) -> tuple[str, ...]:
    """The YAML comment above a folded step: the measured numbers behind it (`measured_in`: the
    lane file whose runs they are, when the step is in another's, whose own were not read)."""
    return (
        f"foldbot: moved here from a job of its own, which spent {fold.suite_setup_median_s / 60:.0f} min on setup",
        f"for {fold.suite_test_median_s / 60:.0f} min of tests (median of {fold.samples} runs; p90 {fold.suite_test_p90_s / 60:.1f} min).",
        *([] if measured_in is None else
          [f"Measured on {measured_in.rsplit('/', 1)[-1]}'s `{fold.job}`, the lane foldbot analysed."]),
        ("Runs after a failure above too, so that cannot hide it." if fold.standalone else
         f"Runs on shard {fold.shard_value} only, and after a failure above too, so that cannot hide it."),
        f"Timeout {fold.timeout_note}.",
    )


def _lane_change(plan: Plan, source: Lane, target: Lane, config: RepoConfig,
                 called: Mapping[str, Workflow]) -> tuple[LaneChange, int, list[str], tuple[CarriedWall, ...]]:
    """The plan in the target lane's job ids; suggestions the lane cannot take are warned about;
    and the carried reshards whose shards run in other waves there, with their wall clock."""
    folds: list[FoldEdit] = []
    reshards: list[ReshardEdit] = []
    walls: list[CarriedWall] = []
    warnings: list[str] = []
    same = target.path == source.path
    named = {source.base_id(job) for job in (*(f.job for f in plan.folds), *(f.into for f in plan.folds),
                                             *(r.job for r in plan.reshards), *(item.job for item in plan.lists))}
    if not same and not any(target.job_id(base) is not None for base in named):
        # a lane of other jobs (pytorch's inductor lane beside its default one) is no sibling: nothing to carry, or say
        return LaneChange(target.path, (), (), ()), 0, [], ()
    checker = Planner(target, [], {}, config)
    # A suggestion resting on fewer than `min_samples` runs of this lane is not carried to another: that
    # lane's own runs, which are not read here, may say otherwise (one run of pr-test-amd.yml cut rocm720's
    # 2-shard matrix to 1, which rocm720's four runs said runs over its limit).
    early = f"it rests on fewer than {_plural(config.min_samples, 'run')} of {source.path} (provisional)"
    for fold in plan.folds:
        suite_id = target.job_id(source.base_id(fold.job))
        host_id = target.job_id(source.base_id(fold.into))
        if not same and fold.provisional:
            warnings.append(f"{target.path}: `{source.base_id(fold.job)}` is not folded there: {early}")
            continue
        if suite_id is None or host_id is None:
            warnings.append(f"{target.path}: has no `{source.base_id(fold.job)}` or `{source.base_id(fold.into)}` job; the fold is not carried there")
            continue
        if not same:
            suite = target.workflow.jobs[suite_id]
            if suite.uses or suite.shard_count > 1 or suite.matrix_expression:
                warnings.append(f"{target.path}: `{suite_id}` is not folded there: it is not one standalone job "
                                f"({_not_standalone(suite)})")
                continue
            why = checker._host_mismatch(suite, target.workflow.jobs[host_id])
            if why:
                warnings.append(f"{target.path}: `{suite_id}` is not folded into `{host_id}` there: `{host_id}` {why}")
                continue
            written = target.workflow.jobs[host_id].timeout_minutes
            limit = DEFAULT_JOB_TIMEOUT_MINUTES if written is None else timeout_minutes(written)
            if limit is None:
                warnings.append(f"{target.path}: `{suite_id}` is not folded into `{host_id}` there: `{host_id}`'s "
                                f"`timeout-minutes` (`{' '.join(str(written).split())[:80]}`) is not known before it runs")
                continue
            if limit < fold.host_budget_minutes:
                warnings.append(f"{target.path}: `{suite_id}` is not folded into `{host_id}` there: `{host_id}` allows "
                                f"{limit:.0f} min there, and the fold needs about {fold.host_budget_minutes:.0f} "
                                f"(p90 setup, every step's timeout, and the p90 of a step with none, as measured in {source.path})")
                continue
        host = target.workflow.jobs[host_id]
        if fold.standalone:
            if host.shard_count > 1:
                warnings.append(f"{target.path}: `{suite_id}` is not folded into `{host_id}` there: `{host_id}` is a "
                                f"matrix of {host.shard_count} jobs there, not one job")
                continue
            folds.append(FoldEdit(suite_id, host_id, None, None, fold.timeout_minutes,
                                  fold_comment(fold, None if same else source.path)))
            continue
        axis = shard_axis(host)
        if axis is None or host.shard_count < 2:
            warnings.append(f"{target.path}: `{suite_id}` is not folded into `{host_id}` there: `{host_id}` has no "
                            "shards there")
            continue
        folds.append(FoldEdit(suite_id, host_id, axis[0], axis[1][0], fold.timeout_minutes,
                                  fold_comment(fold, None if same else source.path)))
    for reshard in plan.reshards:
        job_id = target.job_id(source.base_id(reshard.job))
        if not same and reshard.provisional:
            warnings.append(f"{target.path}: `{source.base_id(reshard.job)}` is not resharded there: {early}")
            continue
        if job_id is None:
            warnings.append(f"{target.path}: has no `{source.base_id(reshard.job)}` job; the reshard is not carried there")
            continue
        job = target.workflow.jobs[job_id]
        if reshard.passed_as is not None:  # (a caller's count, passed to the reusable workflow that runs its shards)
            stage = stage_partitions(target.workflow, job, called, config, reshard.labels)
            if stage is None or (stage.key, stage.count, stage.flag, stage.callee) != \
                    (reshard.passed_as, reshard.from_count, reshard.flag, reshard.callee):
                warnings.append(f"{target.path}: `{job_id}` does not pass {reshard.from_count} shards as "
                                f"`{reshard.passed_as}` to `{reshard.callee}`, which hands them to `{reshard.flag}`; not "
                                "resharded there")
                continue
            limits = (stage.step_minutes, stage.job_minutes, stage.unknown)
            max_parallel, key, step, runs_in = stage.max_parallel, stage.axis, stage.step, stage.job
        else:
            if job.matrix_expression:
                warnings.append(f"{target.path}: `{job_id}` is not resharded there: {job.matrix_expression} comes from "
                                "an expression, so how many jobs it runs is known only when a run starts")
                continue
            axis = shard_axis(job)
            found = partition_step(job, reshard.from_count, config) if axis is not None else None
            if axis is None or len(axis[1]) != reshard.from_count or found is None:
                warnings.append(f"{target.path}: `{job_id}` does not have {reshard.from_count} shards with a `{reshard.flag}` count; not resharded there")
                continue
            step = found[0]
            limits = read_limits(step.timeout_minutes, job.timeout_minutes, reshard.labels)
            max_parallel, key, runs_in = job.max_parallel, axis[0], job
        if not same:  # (the measured lane's were weighed as it was planned)
            # Its timeouts there, with the measured lane's other steps standing in for this one's
            step_minutes, job_minutes, unknown = limits
            limit, note = (None, "") if unknown or job_minutes is None else \
                tests_limit(step_minutes, job_minutes, reshard.rest_p90_s, runs_in.id)
            if limit is None or reshard.predicted_longest_p90_s > config.reshard_safety * limit * 60:
                whose = f"`{runs_in.id}` job" if unknown == "job" else f"`{step.name}` step"
                there = (f"the timeout of its {whose} is not known before it runs" if limit is None else
                         f"the shards' `{step.name}` has {limit:.0f} min there ({note or 'its step timeout'}), "
                         f"{config.reshard_safety:.0%} of which is {config.reshard_safety * limit:.0f}")
                warnings.append(f"{target.path}: `{job_id}` is not resharded there: {there}, and on {reshard.to_count} "
                                f"shards the longest would take about {reshard.predicted_longest_p90_s / 60:.0f} min (p90)")
                continue
            if elsewhere := count_elsewhere(target.workflow, job_id, reshard.from_count):
                warnings.append(f"{target.path}: `{job_id}` is not resharded there: its {reshard.from_count} shards are "
                                f"also counted in {elsewhere}, which the patch would leave behind")
                continue
        if not same and max_parallel != reshard.max_parallel:
            # Its shards run in other waves there: the count does something else to its wall clock.
            wall = CarriedWall(job_id, reshard.job, max_parallel, *reshard.wall_with(max_parallel))
            if reshard.neutral and wall.later_s >= 60:  # (offered as the count that keeps the wall clock)
                warnings.append(f"{target.path}: `{job_id}` is not resharded to {reshard.to_count} there: its shards "
                                "run in other waves there, where that count would make it finish later "
                                f"({wall.before_s / 60:.0f} \u2192 {wall.after_s / 60:.0f} min)")
                continue
            walls.append(wall)
        reshards.append(ReshardEdit(job_id, key, reshard.from_count, reshard.to_count, reshard.flag, reshard.passed_as))
    lists: list[ListEdit] = []
    for listed in plan.lists:
        job_id = target.job_id(source.base_id(listed.job))
        if not same and listed.provisional:
            warnings.append(f"{target.path}: `{source.base_id(listed.job)}`'s list is not trimmed there: {early}")
            continue
        passed = passed_shards(target.workflow, target.workflow.jobs[job_id]) if job_id is not None else None
        if passed is None:
            warnings.append(f"{target.path}: has no `{source.base_id(listed.job)}` job passed a shard list; "
                            "its list is not trimmed there")
            continue
        if not same:  # (the measured lane's own were checked as it was planned)
            others = other_readers(target.workflow, passed, job_id)
            if others:
                warnings.append(f"{target.path}: `{job_id}`'s list is not trimmed there. {shared_list(others)}")
                continue
            limit, whose = list_limit(target.workflow, target.workflow.jobs[job_id], passed, called, listed.labels,
                                      config)
            if limit is None:
                warnings.append(f"{target.path}: `{job_id}`'s list is not trimmed there: {whose[0].lower()}{whose[1:]}")
                continue
        trims = []
        for trim in listed.trims:
            if ShardGroup(trim.config, trim.runner, trim.from_count) not in passed.groups:
                runner = f" on `{trim.runner}`" if trim.runner is not None else ""  # (another runner: other hardware)
                warnings.append(f"{target.path}: `{job_id}` is not passed `{trim.config}` on {trim.from_count} shards"
                                f"{runner}; not trimmed there")
            elif not same and trim.predicted_longest_p90_s > config.reshard_safety * limit * 60:
                warnings.append(f"{target.path}: `{trim.config}` is not trimmed there: on {trim.to_count} its longest "
                                f"shard would take about {trim.predicted_longest_p90_s / 60:.0f} min (p90), over "
                                f"{config.reshard_safety:.0%} of the {limit:.0f}-min `timeout-minutes` {whose}")
            else:
                trims.append(ListTrimEdit(trim.config, trim.runner, trim.from_count, trim.to_count))
        if trims:
            lists.append(ListEdit(job_id, passed.job, passed.key, tuple(trims)))
    carried = len(folds) + len(reshards) + len(lists)
    return LaneChange(target.path, tuple(folds), tuple(reshards), tuple(lists)), carried, warnings, tuple(walls)


def _not_standalone(job: JobDef) -> str:
    if job.uses:
        return f"it runs the reusable workflow `{job.uses}`"
    if job.matrix_expression:
        return f"{job.matrix_expression} comes from an expression"
    return f"its matrix runs {job.shard_count} jobs"


def lane_savings(analysis: Analysis) -> list[dict[str, Any]]:
    """Setup cycles and runner-hours saved per run of each lane (measured numbers
    of the measured lane stand in for the others)."""
    out = []
    for result in analysis.lanes:
        if result.edit is None:
            continue  # the patch does not touch this lane (its edit failed): it saves nothing there
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
        for listed in result.change.lists:
            match_l = next(item for item in analysis.plan.lists if source.base_id(item.job) == result.lane.base_id(listed.job))
            for trim in listed.trims:
                measured = next(t for t in match_l.trims if (t.config, t.runner) == (trim.config, trim.runner))
                cycles += measured.setup_cycles_saved
                seconds += measured.runner_seconds_saved
        out.append({
            "lane": result.lane.name,
            "path": result.lane.path,
            "measured": result.lane.path == analysis.lane.path,
            "setup_cycles": cycles,
            "runner_hours": round(seconds / 3600, 2),
        })
    return out


__all__ = ["Analysis", "AnalysisError", "BundleError", "CarriedWall", "LaneResult", "Unmeasured", "analyze", "lane_savings", "Workflow"]
