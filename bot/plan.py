"""What to change: short suites folded into a host shard, matrices trimmed.

A plan is found on the measured lane and carried to every lane file that has the
same jobs (with that lane's job ids). Every suggestion carries the numbers it
rests on, and every candidate that was not taken carries the reason.

Pure: parsed workflows and timings in, a `Plan` out.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import yaml

from .config import RepoConfig, lane_name
from .edit import EditError, ReshardEdit, partitions_source
from .logs import ShardLog, ShardPredictor, merge_logs
from .timing import JobStats, JobTiming, RunTiming, declared_amd, percentile, median
from .workflow import (DEFAULT_JOB_TIMEOUT_MINUTES, JOB_TOTAL, JobDef, StepDef, Workflow, context_keys, expressions,
                       mapping_get, shard_entry, strings, substitute_matrix, timeout_minutes, tree_expressions,
                       yaml_events)

#: The flags whose number is the shard count: SGLang's run_suite.py (`--total-partitions`, `--auto-partition-size`),
#: pytest-split (`--splits 4 --group ${{ matrix.shard }}`, 1-based groups), pytest-shard (`--num-shards=4
#: --shard-id=${{ matrix.shard }}`, 0-based). A reshard keeps the matrix's first values: its base stays.
PARTITION_FLAGS = ("--total-partitions", "--auto-partition-size", "--splits", "--num-shards")
def _may_anchor(text: str) -> bool:
    """Whether a YAML text may define an anchor (`&name` after a space, a line's start, `[`, `{`, `,`,
    `:` or `-`), as a first look before its events are read: `&&` and `2>&1` in scripts are none. (By
    `str.find`: a regex with that alternation tried every position, 1.6 ms a lane file.)"""
    at = text.find("&")
    while at != -1:
        after = text[at + 1:at + 2]
        if (at == 0 or text[at - 1] in " \t\r\n\x85\u2028\u2029[{,:-") and after and after not in " \t\r\n[]{},&":
            return True
        at = text.find("&", at + 1)
    return False

_JOB_TOTAL = re.compile(rf"(?:{'|'.join(PARTITION_FLAGS)})[ =]\$\{{\{{\s*strategy\.job-total\s*\}}\}}")
#: Job-level keys that shape a step's environment; a suite folds only into a host that agrees on them.
_ENVIRONMENT_KEYS = ("env", "defaults", "container", "services", "permissions", "environment", "continue-on-error",
                     "working-directory", "concurrency")


@dataclass(frozen=True)
class Lane:
    """One lane: a workflow file whose GPU job ids carry the lane's suffix (or none)."""

    path: str
    name: str
    suffix: str  # "-rocm720", or "" for the base lane
    workflow: Workflow

    @classmethod
    def of(cls, workflow: Workflow) -> "Lane":
        name = lane_name(workflow.path)
        suffix = f"-{name}"
        # The base lane (`pr-test-amd.yml`, lane `amd`) has no suffix: `-amd` ends its job ids as a word of the id.
        with_suffix = name != "amd" and any(job_id.endswith(suffix) for job_id in workflow.jobs)
        return cls(workflow.path, name, suffix if with_suffix else "", workflow)

    def base_id(self, job_id: str) -> str:
        return job_id[: -len(self.suffix)] if self.suffix and job_id.endswith(self.suffix) else job_id

    def job_id(self, base_id: str) -> str | None:
        """This lane's id for a job known by its base id, if the lane has it."""
        for candidate in (base_id + self.suffix, base_id):
            if candidate in self.workflow.jobs:
                return candidate
        return None


@dataclass(frozen=True)
class Fold:
    job: str  # the suite's job id (measured lane)
    into: str  # the host's job id (measured lane)
    shard_key: str | None  # the host's shard axis; None: the host is one standalone job
    shard_value: Any
    steps: tuple[str, ...]  # the suite's steps that move, by name
    timeout_minutes: int
    timeout_note: str
    samples: int
    suite_setup_median_s: float
    suite_test_median_s: float
    suite_test_p90_s: float
    suite_share: float
    host_budget_minutes: float  # p90 setup + step timeouts of shard 0 after the fold
    host_limit_minutes: float
    runner_seconds_saved: float  # per run: the suite's median setup
    provisional: bool
    #: The suite's `if:` names its own id (a dispatch input that picks jobs: SGLang's `target_stage`,
    #: `job_filter`): once it is gone, picking it runs nothing.
    selected_by_id: bool = False
    #: Minutes of the suites folded into the same host before this one (in `host_budget_minutes`).
    earlier_minutes: float = 0.0
    #: The host's setup steps the suite's job did not run: its tests run after them once folded.
    host_extra_setup: tuple[str, ...] = ()
    #: The suite's steps that are neither setup nor test (they move with its tests), median seconds.
    suite_other_median_s: float = 0.0

    @property
    def setup_cycles_saved(self) -> int:
        return 1

    def alone(self) -> "Fold":
        """This fold approved by itself: the host's budget without the suites folded there before."""
        return replace(self, host_budget_minutes=self.host_budget_minutes - self.earlier_minutes, earlier_minutes=0.0)

    @property
    def standalone(self) -> bool:
        """Whether the host is one job of its own, not a shard of a matrix."""
        return self.shard_key is None


@dataclass(frozen=True)
class Reshard:
    job: str
    shard_key: str
    from_count: int
    to_count: int
    flag: str
    step: str
    estimate: str  # "per-file logs" | "shard times" | "per-file logs (N runs) and shard times (M runs)"
    predicted_longest_p90_s: float
    limit_s: float
    timeout_minutes: float
    samples: int
    setup_median_s: float
    wall_before_s: float
    wall_after_s: float
    provisional: bool
    max_parallel: int | None = None
    waves_before: int = 1  # shards run in ceil(shards / max-parallel) waves
    waves_after: int = 1
    log_runs: int = 0  # runs whose per-file logs the estimate rests on
    #: When `to_count` slows the lane: the fewest shards that keep its wall clock (None: no
    #: count between them does).
    neutral_count: int | None = None
    neutral_wall_after_s: float = 0.0  # the job's wall clock on `neutral_count` shards
    #: This is the `neutral_count` suggestion itself (to_count is it): carried into another lane only
    #: where it keeps that lane's job's wall clock too (else it is no "keeps the wall clock" there).
    neutral: bool = False
    #: Of a caller whose shards a reusable workflow runs (`StagePartitions`): the `with:` key that holds
    #: the count, changed in place of a matrix, and the called file (None: the job's own matrix).
    passed_as: str | None = None
    callee: str | None = None
    labels: tuple[str, ...] = ()  # the runner labels its shards ran on (a timeout expression may branch on them)
    #: whose `timeout_minutes` is when not the test step's: the job's timeout less its other steps (`tests_limit`)
    timeout_note: str = ""
    rest_p90_s: float = 0.0  # its shards' setup and other steps, p90 (what the job's timeout holds besides the step)
    step_minutes: float | None = None  # the test step's own `timeout-minutes` (None: it has none)
    #: the runs where a test hung past the limit, which no count keeps within it (`hung_past`: which, how long, its
    #: usual time), taken at its usual time there (`Fit.past`; those of `samples`, and runs that lacked a shard's job)
    hung_runs: int = 0
    hung_past: str = ""
    hung_files: int = 0

    @property
    def setup_cycles_saved(self) -> int:
        return self.from_count - self.to_count

    @property
    def runner_seconds_saved(self) -> float:
        return self.setup_cycles_saved * self.setup_median_s

    def at_neutral(self) -> "Reshard":
        """This reshard on `neutral_count` shards: the suggestion that keeps the job's wall clock."""
        assert self.neutral_count is not None
        return replace(self, to_count=self.neutral_count, wall_after_s=self.neutral_wall_after_s, neutral=True,
                       waves_after=_waves(self.neutral_count, self.max_parallel))

    def wall_with(self, max_parallel: int | None) -> tuple[float, float]:
        """The job's wall clock before and after, in seconds, were its shards run `max_parallel`
        at a time (another lane's copy of the job): a wave is setup plus the longest shard."""
        wave_before = self.wall_before_s / self.waves_before
        wave_after = self.wall_after_s / self.waves_after
        return (_waves(self.from_count, max_parallel) * wave_before, _waves(self.to_count, max_parallel) * wave_after)


@dataclass(frozen=True)
class ListTrim:
    """One configuration of a shard list a caller is passed (`PassedShards`), on fewer shards."""

    config: str
    runner: str | None
    from_count: int
    to_count: int
    longest_p90_s: float  # the longest shard today (p90 over the runs that ran them all)
    predicted_longest_p90_s: float  # on `to_count` shards: each run's total over the count, as unevenly as today
    limit_s: float  # `reshard.safety` of the called job's timeout
    timeout_minutes: float
    setup_median_s: float
    samples: int  # runs that ran every shard of it
    reason: str  # what was measured and allowed, as a sentence (the report's line)

    @property
    def setup_cycles_saved(self) -> int:
        return self.from_count - self.to_count

    @property
    def runner_seconds_saved(self) -> float:
        return self.setup_cycles_saved * self.setup_median_s


@dataclass(frozen=True)
class ListReshard:
    """The configurations of one caller's shard list that the times allow on fewer shards:
    `num_shards` lowered and the shards past it dropped, in the `with:` value of the job
    that writes the list (pytorch's build job's `test-matrix`)."""

    job: str  # the caller whose jobs run the shards (a job of the measured lane)
    writer: str  # the job whose `with:` writes the list
    key: str  # that `with:` key
    trims: tuple[ListTrim, ...]
    provisional: bool
    #: the caller's longest shard (p90 over its runs), today and with the trims: its configurations run
    #: side by side, so a configuration not trimmed may still be the longest
    wall_before_s: float = 0.0
    wall_after_s: float = 0.0
    labels: tuple[str, ...] = ()  # the caller's runner labels (a timeout expression may branch on them)

    @property
    def setup_cycles_saved(self) -> int:
        return sum(t.setup_cycles_saved for t in self.trims)

    @property
    def runner_seconds_saved(self) -> float:
        return sum(t.runner_seconds_saved for t in self.trims)

    @property
    def slower_by_s(self) -> float:
        """How much longer the caller's longest shard runs (the lane's wall clock, as its shards run side by side)."""
        return self.wall_after_s - self.wall_before_s


@dataclass(frozen=True)
class Finding:
    """A candidate that was looked at and left alone, with the reason."""

    job: str
    reason: str


@dataclass(frozen=True)
class CutOff:
    """A test file a shard's log began and never ended: the step ran into its timeout there. Or
    (`killed`) one the runner itself killed at its `--timeout-per-file`: ended, but its time is that
    cap, not the file's."""

    file: str
    runs: int  # the runs it was cut off in
    #: seconds it ran at least, in the run where that is most: its shard's step time less the
    #: files that shard finished (None when its log left more than one file unfinished); of a
    #: killed file, the `--timeout-per-file` it was killed at
    at_least_s: float | None
    estimate_s: float | None  # the runner's own estimate, when its log printed one
    killed: bool = False
    by: str = "--timeout-per-file"  # of a killed file, the cap that stopped it (aiter's script: `timeout 60m`)


@dataclass(frozen=True)
class Plan:
    lane: str  # the measured lane's path
    folds: tuple[Fold, ...] = ()
    reshards: tuple[Reshard, ...] = ()
    findings: tuple[Finding, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    overruns: tuple[str, ...] = ()  # matrices whose shards already ran into their timeout
    partial_logs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: matrices -> their shard logs whose header names another shard than their job's (not used)
    misplaced_logs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: matrices -> the test files their logs began and never ended (the step's timeout cut them off), and
    #: those the runner killed at its `--timeout-per-file` (`CutOff.killed`)
    cut_off: dict[str, tuple["CutOff", ...]] = field(default_factory=dict)
    #: matrices -> their runs where a file the runner killed past the shards' limit is taken at its usual time (`_taken`)
    hang_runs: dict[str, int] = field(default_factory=dict)
    #: matrices -> their runs with a file the runner killed that are read on their shard times (the rest of them)
    kill_fallbacks: dict[str, int] = field(default_factory=dict)
    #: matrices -> their runs with a file the runner killed that lacked a shard's job (read for no count)
    kill_partials: dict[str, int] = field(default_factory=dict)
    #: matrices -> their runs read file by file where a file that hangs was killed and then run to its end by a retry
    kill_retried: dict[str, int] = field(default_factory=dict)
    # matrices whose shard count foldbot could change -> runs whose per-file logs it read for them
    reshard_candidates: dict[str, int] = field(default_factory=dict)
    #: those matrices -> how many shards they run (a caller's: the count it passes its reusable workflow)
    shard_counts: dict[str, int] = field(default_factory=dict)
    #: of a matrix measured by groups of its shards (aiter's runners), the runs of a group whose logs are read, oldest
    #: first (else: each run that ran `shard_counts` shards)
    wanted_runs: dict[str, tuple[tuple[JobTiming, ...], ...]] = field(default_factory=dict)
    #: Shard lists measured but not edited (a list passed to a reusable workflow as a string; a count another job
    #: writes, or one over several runners): what the times allow, to change by hand.
    by_hand: tuple[Finding, ...] = ()
    #: Shard lists passed to a reusable workflow that the times allow on fewer shards.
    lists: tuple[ListReshard, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.folds and not self.reshards and not self.lists

    @property
    def setup_cycles_saved(self) -> int:
        return sum(s.setup_cycles_saved for s in (*self.folds, *self.reshards, *self.lists))

    @property
    def runner_seconds_saved(self) -> float:
        return sum(s.runner_seconds_saved for s in (*self.folds, *self.reshards, *self.lists))


# --- helpers over job definitions ----------------------------------------------------------------

def shard_axis(job: JobDef) -> tuple[str, list[Any]] | None:
    """The matrix axis that numbers the shards: `part`, else the only axis with
    several values. None when several axes vary (the shards are not one list)."""
    axes = job.matrix_axes
    varying = {k: v for k, v in axes.items() if len(v) > 1}
    if len(varying) > 1:
        return None
    if "part" in axes:
        return "part", axes["part"]
    if len(varying) == 1:
        key = next(iter(varying))
        return key, varying[key]
    return None


def _include_entries(job: JobDef) -> list[dict[str, Any]]:
    """The entries of a matrix written as an `include` list alone (no axes), each a mapping; [] for another."""
    if job.matrix_axes or not isinstance(job.matrix, dict):
        return []
    return [e for e in job.matrix.get("include") or () if isinstance(e, dict)]


def _varying(entries: list[dict[str, Any]]) -> list[str]:
    """The keys whose values differ between `include` entries, in the order they are first written."""
    return [key for key in dict.fromkeys(k for e in entries for k in e) if len({repr(e.get(key)) for e in entries}) > 1]


def shards_over(job: JobDef) -> tuple[str, str, list[int], list[str]] | None:
    """Of a matrix written as an `include` list of the same shard numbers on each of several values of one other key
    (ROCm/aiter's `standard`: `shard_idx` 0..7 on each of two runners, one split of the suite): the shard key, the
    other key, the shard numbers and the other key's values. None for any other matrix."""
    entries = _include_entries(job)
    varying = _varying(entries)
    numbers = [key for key in varying if all(_number(e.get(key)) for e in entries) and _SHARD_KEY.search(key)]
    others = [key for key in varying if key not in numbers]
    if not numbers or not others:
        return None
    by_kind: dict[str, list[str]] = {}
    for e in entries:
        by_kind.setdefault(_short(e.get(others[0])), []).append(str(e.get(numbers[0])))
    alike = len(by_kind) > 1 and len({tuple(sorted(shards)) for shards in by_kind.values()}) == 1 and \
        all(len(set(shards)) == len(shards) > 1 for shards in by_kind.values())
    if not alike:
        return None
    return numbers[0], others[0], sorted(int(v) for v in next(iter(by_kind.values()))), sorted(by_kind)


def _matrix_value(job: JobDef, shard: JobTiming, key: str) -> str | None:
    """The value of `matrix.<key>` one API job ran with: as its name's match read it, else, of a matrix of
    `include` entries alone, from the one entry whose values its name lists (`Standard Tests (1 GPU)
    (linux-aiter-mi35x-1, MI35X, 8, 3)`), or of a matrix of one axis an expression gives, the one value its
    name lists (`triton (3)`)."""
    value = shard.ref.value(key)
    listed = re.search(r" \(([^()]*)\)\s*$", shard.name)
    if value is not None or listed is None or not isinstance(job.matrix, dict):
        return value
    shown = [v.strip() for v in listed.group(1).split(", ")]
    if set(job.matrix) <= {"include", "exclude"}:
        found = [e for e in _include_entries(job) if [_shown(v) for v in e.values()] == shown]
        return _shown(found[0][key]) if len(found) == 1 and key in found[0] else None
    return shown[0] if list(job.matrix) == [key] and len(shown) == 1 else None


def _shown(value: Any) -> str:
    """A matrix value as GitHub lists it in a job's name."""
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def _unaxed(job: JobDef) -> str:
    """Why a matrix with no one shard axis is not resharded: an `include` list over runners or other
    things than shard numbers (aiter's MI355 / MI325 entries: jobs of their own runners, not shards of
    one suite), one of shard numbers foldbot does not rewrite, or several varying axes."""
    if job.matrix_axes:
        return "its matrix has several axes with several values; shard count left alone"
    entries = _include_entries(job)
    varying = _varying(entries)
    # numbers named as shards (`part`, `shard`, ...); not a GPU count (ROCm/iris's `num_ranks`: 1, 2, 4, 8 GPUs), nor
    # numbers beside a key of words (its `test_dir`): configurations of their own
    numbers = [key for key in varying if all(_number(e.get(key)) for e in entries) and _SHARD_KEY.search(key)]
    if varying and not numbers:  # (a shard number beside its runner, `{shard, runner}`, is a shard list all the same)
        key = next((key for key in varying if not all(_number(e.get(key)) for e in entries)), varying[0])
        shown = ", ".join(_short(e.get(key)) for e in entries[:4]) + (", ..." if len(entries) > 4 else "")
        return (f"its matrix is an `include` list of {len(entries)} entries varying `{key}` ({shown}): jobs of their own, "
                "not shards of one suite; nothing to reshard, and a matrix's job is not folded")
    over = shards_over(job)
    if over is not None:  # (ROCm/aiter: `shard_idx` 0..7 on each of two runners, from one split of the suite)
        key, other, values, kinds = over
        return (f"its matrix is an `include` list of {len(entries)} entries: shards `{key}` {values[0]} to "
                f"{values[-1]} on each of {len(kinds)} `{other}` values ({', '.join(f'`{k}`' for k in kinds[:4])}"
                f"{', ...' if len(kinds) > 4 else ''}), one count of shards over several of them, which foldbot does "
                "not rewrite: shard count left alone")
    return ("its matrix is an `include` list; foldbot reshards only a shard list written as an axis (`part: [0, 1, 2]`): "
            "shard count left alone")


#: A matrix key whose numbers are shard numbers.
_SHARD_KEY = re.compile(r"(?i)^(?!n(?:um)?[-_]?(?:nodes|workers|ranks|gpus|shards)$)(?!.*per[-_](?:node|worker)$)(?:.*(?:part|shard|split|chunk|slice"
                        r"|bucket|index).*|(?:.*[-_])?(?:worker|node)(?:[-_]?(?:id|idx|rank))?|id|idx|n|group)$")
# (pytest-split's `group`, `ci_node_index`, `job_index`, `worker`; not a count: `num_nodes`, `nnodes`, `num_workers`)


def _number(value: Any) -> bool:
    """Whether a matrix value is a shard number as written: ASCII digits (not `①` or `²`, which `str.isdigit` takes
    and `int` refuses)."""
    return re.fullmatch(r"[0-9]+", str(value)) is not None


def _short(value: Any) -> str:
    """A matrix value for a sentence: at most 40 characters."""
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "\u2026"


def _reusable(job: JobDef, passed: PassedShards | None, called: Mapping[str, JobStats], config: RepoConfig,
              given: Any = None, stage: StagePartitions | None = None, refusal: StageRefusal | None = None) -> str:
    """Why a caller of a reusable workflow is not folded, and resharded only by what it passes, and
    what to change instead (`called`: the jobs it runs there, measured each on its own: `called_stats`;
    `given`: its `with:`; `stage`: the shard count it passes that foldbot changes)."""
    uses = str(job.uses)
    if passed is not None:  # (its shard count is in this file: measured on its own)
        return (f"its AMD jobs run the reusable workflow `{uses}`, whose steps foldbot does not edit; how many shards "
                f"they run is the list in `{passed.job}`'s `{passed.key}`, which this report measures per configuration")
    short = _short_called(called, config)
    if uses.startswith("./"):
        # A chain of them (TheRock's `multi_arch_ci_linux.yml` -> `test_artifacts.yml` -> `test_component.yml`): the
        # jobs' names show a level per call; the file this job names may hold no GPU job at all.
        deeper = next((name for name in sorted(called) if " / " in name), None)
        where = (f"in the reusable workflow `{uses}` or one it calls in turn (the jobs' names show the levels: "
                 f"`{deeper}`)" if deeper else f"in the reusable workflow `{uses}`")
        passes = "" if job.matrix is None else (
            f" (or the matrix this job passes it: {job.matrix_expression} comes from an expression, known only when a "
            "run starts)" if job.matrix_expression else " (or the matrix this job passes it)")
        if stage is not None:
            return (f"its AMD jobs run {where}, whose matrices and steps foldbot does not edit; how many shards they "
                    f"run is this job's `with: {stage.key}:` ({stage.count} shards), which foldbot sets as it would a "
                    f"matrix's count (the reshard, or why there is none, is in this report); to fold them, change "
                    f"the file that holds them by hand{short}")
        if sized := _passed_partitions(given):  # the count is this job's to change, not the called file's
            return (f"its AMD jobs run {where}, whose matrices and steps foldbot does not edit; how many shards they "
                    f"run is this job's `with: {sized[0]}:` ({sized[1]} shards), which foldbot does not set either"
                    + (f": {refusal.why}" if refusal else "")
                    + (f"{';' if refusal else ':'} to reshard them, change it by hand, with the times above (to fold "
                       f"them, the file that holds them){short}" if refusal is None or refusal.by_hand else f"{short}"))
        return (f"its AMD jobs run {where}, whose matrices and steps foldbot does not edit; to fold or reshard them, "
                f"change the file that holds them{passes} by hand, with the times above{short}")
    # `owner/repo/.github/workflows/x.yml@ref`: the steps are another repository's (torchtitan's and FBGEMM's callers
    # of pytorch/test-infra's `linux_job_v2.yml`); only what this job passes it is this repository's to change.
    repo = "/".join(uses.split("/")[:2])
    matrix = " or its matrix" if job.matrix is not None else ""
    return (f"its AMD jobs run the reusable workflow `{uses}` of another repository (`{repo}`), whose steps are not "
            f"in this repository; to fold or reshard them, change what this job passes it (its `with:`{matrix}) "
            f"by hand, with the times above{short}")


def _passed_partitions(given: Any) -> tuple[str, int] | None:
    """The input of a caller's `with:` that says how many shards the called workflow runs, as a
    literal: SGLang's `_pr-test-stage-amd.yml` is passed `partitions: '{"size":14,"arr":[0,...,13]}'`
    (its matrix `fromJson(inputs.partitions).arr`); (the input, the count), else None."""
    for key, value in given.items() if isinstance(given, dict) else ():
        if (data := partitions_literal(value)) is not None:
            return str(key), len(data["arr"])
    return None


def partitions_literal(value: Any, least: int = 2) -> dict[str, Any] | None:
    """A `with:` value that is a shard count as a JSON literal (`'{"size":14,"arr":[0,...,13]}'`), parsed:
    `arr` the shard ids (`least` or more integers: one, as a reshard to one shard writes it), `size` (when
    given) their number. None for anything else."""
    if not isinstance(value, str) or "${{" in value or '"arr"' not in value or len(value) > SHARD_LIST_MAX_CHARS:
        return None
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        return None
    arr = data.get("arr") if isinstance(data, dict) else None
    if isinstance(arr, list) and len(arr) >= max(least, 1) and all(type(v) is int for v in arr) and \
            data.get("size", len(arr)) == len(arr) and type(data.get("size", 0)) is int:
        return data
    return None


@dataclass(frozen=True)
class StagePartitions:
    """A shard count a caller passes the reusable workflow that runs its shards, which foldbot can
    change there: SGLang's `_pr-test-stage-amd.yml`, passed `partitions: '{"size":14,"arr":[0,...,13]}'`,
    runs one job whose matrix is `partition: ${{ fromJson(inputs.partitions).arr }}` and whose test step
    hands `fromJson(inputs.partitions).size` to `--auto-partition-size`. Read as a matrix of this job's
    own: its shards are the caller's jobs, the called job's test step their step."""

    key: str  # the caller's `with:` key that holds the count (the called workflow's input)
    count: int
    callee: str  # the called file's path
    job: JobDef  # the called job that runs the shards
    axis: str  # its matrix key
    step: StepDef  # its test step, which carries the count
    flag: str  # the flag the count is handed to (`PARTITION_FLAGS`)
    #: the test step's `timeout-minutes` and the called job's, with what the caller passes (the step's None when
    #: it has none; the job's GitHub's 360 when it has none); `unknown` names one not known before a run starts
    step_minutes: float | None
    job_minutes: float | None
    max_parallel: int | None  # the called job's `max-parallel`, with what the caller passes
    unknown: str = ""  # "step" | "job" | ""


def tests_limit(step_minutes: float | None, job_minutes: float, rest_p90_s: float, job_id: str) -> tuple[float, str]:
    """The minutes a shard's test step has, and whose they are when not its own timeout's: that timeout, or
    the job's less what its shards spend on their other steps (`rest_p90`), whichever ends it sooner (the job's
    timeout holds setup and every step alike)."""
    left = job_minutes - rest_p90_s / 60
    if step_minutes is not None and step_minutes <= left:
        return step_minutes, ""
    return max(left, 0.0), (f"`{job_id}`'s {job_minutes:.0f}-min job timeout less its setup and other steps "
                            f"({rest_p90_s / 60:.0f} min at p90)")


def read_limits(step_raw: Any, job_raw: Any, labels: tuple[str, ...],
                read: Callable[[Any], float | None] | None = None) -> tuple[float | None, float | None, str]:
    """A test step's and its job's `timeout-minutes` in minutes (the step's None when it has none; the job's
    GitHub's 360 when it has none), and which of them is written but not known before a run starts ("step",
    "job", or ""). `read`: how a value is read (a called file's, with what its caller passes), else
    `timeout_minutes` with the runs' labels."""
    read = read or (lambda value: timeout_minutes(value, labels))
    job_minutes = DEFAULT_JOB_TIMEOUT_MINUTES if job_raw is None else read(job_raw)
    step_minutes = None if step_raw is None else read(step_raw)
    return step_minutes, job_minutes, ("job" if job_minutes is None else
                                       "step" if step_raw is not None and step_minutes is None else "")


def rest_p90(runs: list[tuple[JobTiming, ...]], step_name: str) -> float:
    """What a matrix's shards spend on all but one step, as their job's timeout holds it besides that step: their
    setup (p90 over every shard: it varies with the runner, not with the shard), and their other steps (p90 over
    the runs of each run's costliest shard: a step only shard 0 runs, `if: matrix.part == 0`, stays in its budget
    after a reshard). The step's time is read as the predictions read it: the shard's test time where no step of
    its run has that name. Over the runs that ran every shard (`runs`), as the predictions are: a run of some
    shards may lack the costly one."""
    setup = percentile([j.setup_seconds for shards in runs for j in shards], 90)
    steps = percentile([max(j.test_seconds + j.other_seconds - (j.step_seconds(step_name) or j.test_seconds)
                            for j in shards) for shards in runs if shards], 90)
    return setup + steps


def stage_partitions(workflow: Workflow, job: JobDef, called: Mapping[str, Workflow], config: RepoConfig,
                     labels: tuple[str, ...] = ()) -> StagePartitions | None:
    """The shard count a caller passes as a literal (`partitions_literal`, shard ids 0..n-1) to a
    reusable workflow of its repository (`called`) whose one job runs them as its matrix and hands the
    count to a flag of its test step; None for anything else (`_stage` says why)."""
    found = _stage(workflow, job, called, config, labels)
    return found if isinstance(found, StagePartitions) else None


class StageRefusal(NamedTuple):
    """Why the count a caller passes is no `StagePartitions`, and whether changing it by hand is the advice
    (not where the count reaches no test command: fewer shards would drop repeats of the whole suite)."""

    why: str
    by_hand: bool = True


def _stage(workflow: Workflow, job: JobDef, called: Mapping[str, Workflow], config: RepoConfig,
           labels: tuple[str, ...]) -> "StagePartitions | StageRefusal":
    path = local_callee(job) or str(job.uses)
    callee = called.get(path)
    given = with_of(workflow, job)
    if callee is None or not isinstance(given, dict):
        return StageRefusal(f"`{path}` was not read, no workflow of this repository at this commit or one that does not parse")
    if len(callee.jobs) != 1:  # (another job there would be among this caller's jobs, as if a shard)
        return StageRefusal(f"`{path}` runs {len(callee.jobs)} jobs, not one whose matrix is the shards")
    for key, value in given.items():
        data = partitions_literal(value)
        if data is None:
            continue
        if data["arr"] != list(range(len(data["arr"]))):
            return StageRefusal(f"its `arr` is not the shard ids 0 to {len(data['arr']) - 1}, the list foldbot writes")
        (runs,) = callee.jobs.values()
        read = re.compile(rf"(?i)fromjson\(\s*inputs\.{re.escape(str(key))}\s*\)\s*\.\s*")
        strategy = callee.data["jobs"][runs.id].get("strategy")
        matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
        axes = [axis for axis, spec in matrix.items() if isinstance(spec, str) and re.search(read.pattern + "arr\\b", spec)] \
            if isinstance(matrix, dict) else []
        if len(axes) != 1 or len(matrix) != 1:
            return StageRefusal(f"the matrix of `{path}`'s `{runs.id}` is not `fromJson(inputs.{key}).arr` alone")
        for step in runs.steps:
            text = "\n".join([step.run or "", *strings(step.env)])
            flags = [flag for flag in PARTITION_FLAGS if re.search(rf"{flag}\b", text)]
            sized = [expr for expr in expressions(text) if re.search(read.pattern + r"size\b", expr)]
            if config.step_category(step) != "test" or len(flags) != 1 or not sized:
                continue
            switch = _switched_on(callee, given, str(key), sized, step)
            if switch == "off":
                return StageRefusal(f"`{path}` hands the count to no test command with what this job passes (its switch is "
                               "off): each shard runs the whole suite, so fewer shards would drop repeats, not spread "
                               "it", by_hand=False)
            if switch != "on":
                return StageRefusal(f"`{path}` hands the count to its test command only where a switch allows it, which what "
                               "this job passes may turn off (each shard would then run the whole suite): settle that "
                               "first")
            source = _source_of(workflow, job, str(key))
            if source is None or not _rewritable(source, len(data["arr"])):
                return StageRefusal("its JSON is written so that the patch cannot change `size` and `arr` where they are written")
            given_value = _given(callee, given)
            step_minutes, job_minutes, unknown = read_limits(
                step.timeout_minutes, runs.timeout_minutes, labels,
                lambda value: _callee_minutes(value, given, given_value, labels))
            parallel = _callee_minutes(strategy.get("max-parallel"), given, given_value, labels, guess=False)
            return StagePartitions(str(key), len(data["arr"]), callee.path, runs, axes[0], step, flags[0],
                                   step_minutes, job_minutes, int(parallel) if parallel else None, unknown)
        return StageRefusal(f"no test step of `{path}`'s `{runs.id}` hands `fromJson(inputs.{key}).size` to one count flag")
    return StageRefusal("it passes no shard count as JSON")


def _source_of(workflow: Workflow, job: JobDef, key: str) -> str | None:
    """The text of a caller's `with:` value as its file writes it (quotes, block and all)."""
    node = mapping_get(mapping_get(job.node, "with"), key)
    return workflow.text[node.start_mark.index:node.end_mark.index] if isinstance(node, yaml.ScalarNode) else None


def _rewritable(source: str, count: int) -> bool:
    """Whether the patch can change a shard count's JSON where it is written (`edit.partitions_source`)."""
    try:
        partitions_source("", source, ReshardEdit("", "", count, count - 1, "", "partitions"))
    except EditError:
        return False
    return True


def _switched_on(callee: Workflow, given: dict[str, Any], key: str, sized: list[str], step: StepDef) -> str:
    """Whether the count reaches the test command with what the caller passes. The expressions that hand it
    on (`sized`), and those that hand on an `env:` variable holding one of them (`${{ inputs.x && '$ARGS' || ''
    }}`), may be switched by a boolean input only as SGLang's is: `inputs.auto_partition && format(...) || ''`,
    with that input true (passed, else its default). A switch written any other way (`!inputs.x`, `== false`,
    `inputs['x']`, several), or one passed from an expression, may be off: no count foldbot changes. "on", "off"
    (the switch is false: the count reaches no command), or "unknown"."""
    on = callee.data.get("on") if isinstance(callee.data, dict) else None
    call = on.get("workflow_call") if isinstance(on, dict) else None
    inputs = call.get("inputs") if isinstance(call, dict) else {}
    inputs = {str(k).lower(): v for k, v in inputs.items()} if isinstance(inputs, dict) else {}
    passed = {str(k).lower(): v for k, v in given.items()}

    def value(name: str) -> Any:
        spec = inputs.get(name)
        return passed[name] if name in passed else spec.get("default") if isinstance(spec, dict) else None

    def boolean(name: str) -> bool:
        spec = inputs.get(name)
        return (isinstance(spec, dict) and spec.get("type") == "boolean") or isinstance(value(name), bool)

    carriers = [str(name) for name, text in (step.env.items() if isinstance(step.env, dict) else ())
                if isinstance(text, str) and any(expr in text for expr in sized)]
    texts = "\n".join([step.run or "", *strings(step.env)])
    gating = sized + [expr for expr in expressions(texts) if expr not in sized and any(
        re.search(rf"(?<![\w.])(?:\$\{{?|env\.){re.escape(name)}(?!\w)", expr) for name in carriers)]
    states: list[str] = []  # per expression that hands the count on: "on" (switched on, or no switch) or "off"
    for expr in gating:
        if re.search(r"(?i)\binputs\s*\[", expr):
            return "unknown"
        switches = [name for name in dict.fromkeys(m.lower() for m in re.findall(r"(?i)\binputs\.([a-z_][\w-]*)", expr))
                    if name != key.lower() and boolean(name)]
        if not switches:
            states.append("on")
            continue
        lead = re.match(r"(?i)\s*inputs\.([a-z_][\w-]*)\s*&&", expr)
        if len(switches) > 1 or lead is None or lead[1].lower() != switches[0] or \
                len(re.findall(rf"(?i)\binputs\.{re.escape(switches[0])}\b", expr)) != 1:
            return "unknown"
        state = value(switches[0])  # (a literal; `'true'` as text too, as GitHub reads a caller's string)
        if state is False or state == "false":
            states.append("off")
        elif state is not True and state != "true":
            return "unknown"
        else:
            states.append("on")
    # off only where every expression that hands the count on is switched off (one that hands it on, switched on
    # or with no switch, beside one that is off: which reaches the command is not told here)
    return "off" if states and len(states) == len(gating) and set(states) == {"off"} else \
        "unknown" if "off" in states else "on"


def _callee_minutes(value: Any, given: dict[str, Any], substitute: Callable[[re.Match[str]], str],
                    labels: tuple[str, ...], guess: bool = True) -> float | None:
    """A number of the called file (a `timeout-minutes`, a `max-parallel`) with what the caller passes
    put in: `${{ inputs.x }}` alone is the caller's value as it is written (a number; with `guess`, an
    expression read as the lane's own timeouts are, `timeout_minutes`); else each `inputs.<name>` replaced."""
    if value is None:
        return None
    alone = re.fullmatch(r"\$\{\{\s*inputs\.([A-Za-z_][\w-]*)\s*\}\}", str(value).strip())
    if alone and alone[1] in given and not isinstance(given[alone[1]], (dict, list, bool)):
        return (timeout_minutes if guess else _known_minutes)(given[alone[1]], labels)
    return _known_minutes(_INPUT.sub(substitute, str(value)), labels)


def _short_called(called: Mapping[str, JobStats], config: RepoConfig) -> str:
    """The jobs a caller runs in a reusable workflow that a fold would take, were they written in
    this file: short (`fold.max_test_minutes`) and mostly setup (`fold.min_setup_share`)."""
    short = [(name, stats) for name, stats in sorted(called.items(), key=lambda kv: -kv[1].share)
             if stats.samples and stats.work.p90 <= config.fold_max_test_minutes * 60
             and stats.share >= config.fold_min_setup_share]
    if not short or len(called) < 2:  # (one job alone: nothing there to fold it into)
        return ""
    listed = ", ".join(f"`{name}` ({stats.test.p90 / 60:.1f} min of tests at p90, {stats.share:.0%} setup)"
                       for name, stats in short[:4])
    more = f" and {len(short) - 4} more" if len(short) > 4 else ""
    return (f"; of the {len(called)} jobs it runs there, {listed}{more} "
            f"{'is' if len(short) == 1 else 'are'} short and mostly setup: a job of their own pays a runner's setup "
            "for a few minutes of tests, a suite to fold into another of those jobs")


def _expression(job: JobDef, workflow: Workflow | None = None) -> str:
    """Why a job whose matrix an expression gives is not edited; and, when the expression is another job's output
    (ROCm/aiter's `shard: ${{ fromJSON(needs.split_triton_tests.outputs.shards) }}`), that job, with the count its
    script writes when it writes one (`split_tests.sh --shards 8`): where the count is changed, by hand."""
    said = f"{job.matrix_expression} comes from an expression, so how many jobs it runs is known only when a run starts"
    found = _output_writer(job, workflow) if workflow is not None else None
    if found is None:
        return said
    writer, output, counts = found
    where = f"`{writer}`'s output `{output}`"
    if len(counts) == 1:
        where += f", whose count its `{counts[0][0]}` step writes (`{counts[0][1]}`): change it there, by hand"
    return f"{said} ({where})"


def _output_writer(job: JobDef, workflow: Workflow) -> tuple[str, str, list[tuple[str, str]]] | None:
    """The one job this one needs whose output its matrix's expression reads, that output, and the count flags its
    steps write (`(step name, "--shards 8")`); None when the expression reads no one job's output."""
    writers = {(need, output) for need, output in _outputs_read(job, workflow) if need in job.needs and need in workflow.jobs}
    if len(writers) != 1:
        return None
    ((writer, output),) = writers
    counts = [(step.name, m.group(0)) for step in workflow.jobs[writer].steps
              for m in [_COUNT_FLAG.search(step.run or "")] if m]
    return writer, output, counts


def _outputs_read(job: JobDef, workflow: Workflow) -> set[tuple[str, str]]:
    """The (job, output) pairs a job's `strategy` reads (`needs.<job>.outputs.<name>`, anywhere in it)."""
    raw = workflow.data["jobs"].get(job.id)
    strategy = raw.get("strategy") if isinstance(raw, dict) else None
    return {(m[1], m[2]) for text in strings(strategy) for m in _NEEDS_OUTPUT_ANY.finditer(text)}


#: `needs.<job>.outputs.<name>` anywhere in an expression (in a `fromJSON(...)`).
_NEEDS_OUTPUT_ANY = re.compile(r"(?i)\bneeds\.([A-Za-z_][\w-]*)\.outputs\.([A-Za-z_][\w-]*)")
#: A shard count a script passes its splitter: the count flags, and aiter's `split_tests.sh --shards N`.
_COUNT_FLAG = re.compile(rf"(?:{'|'.join(PARTITION_FLAGS)}|--shards)[ =]\d+(?![\d./])")


def _sets_env(step: StepDef) -> bool:
    """Whether a step sets what every later step of its job runs with (`$GITHUB_ENV`, `$GITHUB_PATH`)."""
    return bool(re.search(r"\bGITHUB_(?:ENV|PATH)\b", step.run or ""))


def _extra_setup(suite: JobDef, host: JobDef, category: Callable[[StepDef], str]) -> tuple[str, ...]:
    """The host's setup steps the suite's job has not (SGLang's `Setup kernel caches` in the
    multimodal host of PR #34483): the suite's tests run after them once folded."""
    own = {s.identity for s in suite.steps if category(s) == "setup"}
    return tuple(s.name for s in host.steps if category(s) == "setup" and s.identity not in own)


def _matrix_values(job: JobDef) -> dict[str, list[Any]]:
    """What `matrix.<key>` (lower case) can be in the job: its axes, or the one value of each key
    of a matrix that makes one job (an `include` entry too)."""
    single = job.one_combination if job.shard_count == 1 else None
    values = {k: [v] for k, v in single.items()} if single is not None else job.matrix_axes
    return {k.lower(): v for k, v in values.items()}


def _runs_on_key(job: JobDef, matrix_values: dict[str, Any]) -> str:
    """The job's runs-on with matrix references replaced (each axis's first value
    unless given), so `${{ matrix.runner }}` compares as the label it stands for."""
    values = {k: v[0] for k, v in job.matrix_axes.items() if v}
    values.update(job.one_combination or {})
    values.update(matrix_values)
    matrix_values = values
    runs_on = job.runs_on
    if isinstance(runs_on, list):
        parts = [substitute_matrix(str(r), matrix_values) for r in runs_on]
        return "|".join(sorted(parts))
    if isinstance(runs_on, dict):
        return repr(sorted(runs_on.items()))
    return substitute_matrix(str(runs_on), matrix_values)


_LITERAL = re.compile(r"'((?:[^']|'')*)'")
_READS_INPUTS = re.compile(r"(?i)(?<![\w.])(?:github\.event\.)?inputs\.")


def _gate(job: JobDef) -> str:
    return _gate_of(job.if_, job.id)


@functools.lru_cache(maxsize=1024)
def _gate_of(if_: str | None, job_id: str) -> str:
    """The job's `if:` (without `${{ }}`, whitespace folded), its own id taken out where a
    dispatch input picks it: in a quoted string of a clause that reads `inputs.*` (SGLang's
    `contains(format(',{0},', inputs.target_stage), ',<id>,')`, `inputs.job_filter == '<id>'`).
    Elsewhere the id is part of what the gate asks (`needs.changes.outputs.<id>`, a label named
    after the job, `contains(fromJSON(needs.x.outputs.suites), '<id>')`) and stays."""
    text = (if_ or "").strip()
    if whole := re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S):
        text = whole.group(1)
    if _READS_INPUTS.search(text):
        own = re.compile(rf"(?<![\w-]){re.escape(job_id)}(?![\w-])")
        text = _LITERAL.sub(lambda m: "'" + own.sub("<self>", m.group(1)) + "'"
                            if _READS_INPUTS.search(_clause(text, m.start())) else m.group(0), text)
    return " ".join(text.split())


def _clause(text: str, at: int) -> str:
    """The clause of an expression around offset `at`: within the innermost parentheses that
    hold it (a call's arguments, a group), the part between the `&&` and `||` of that level.
    Quoted strings come back blank: their parentheses, operators and words (`'(inputs.x'`) are text."""
    text = _LITERAL.sub(lambda m: "'" + " " * (len(m.group(0)) - 2) + "'", text)
    depth, start = 0, 0
    for i in range(at - 1, -1, -1):  # the innermost unmatched '(' before it
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            if depth == 0:
                start = i + 1
                break
            depth -= 1
    depth, end = 0, len(text)
    for i in range(at, len(text)):  # and its ')'
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            if depth == 0:
                end = i
                break
            depth -= 1
    group = text[start:end]
    parts, depth, last = [], 0, 0
    for i, ch in enumerate(group):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and group[i:i + 2] in ("&&", "||"):
            parts.append((last, i))
            last = i + 2
    parts.append((last, len(group)))
    return next(group[a:b] for a, b in parts if a <= at - start <= b)


def _picked_by_id(job: JobDef) -> bool:
    """Whether a dispatch input picks the job by its id (see `_gate`)."""
    return "'" in _gate(job) and "<self>" in _gate(job)


@dataclass(frozen=True)
class ShardGroup:
    """One configuration's shards in a list passed to a reusable workflow."""

    config: str
    runner: str | None
    count: int

    def holds(self, values: tuple[str, ...]) -> bool:
        """Whether a called job whose name ends in `(<config>, <shard>, <count>, <runner>, ...)`,
        as pytorch's test workflows name theirs, is one of these shards. Not a copy in one of pytorch's
        periodic modes (`..., <runner>, mem_leak_check)`: its scheduled run copies each entry once a mode,
        with another timeout, 600 min, and ~2.5x the time)."""
        return (len(values) >= 3 and values[0] == self.config and _SHARD_NUMBER.fullmatch(values[1]) is not None
                and values[2] == str(self.count) and (self.runner is None or len(values) < 4 or values[3] == self.runner)
                and not any(value in PERIODIC_MODES for value in values[4:]))


#: pytorch's periodic modes (filter_test_configs.py): a scheduled run copies each test-matrix entry once a mode,
#: the mode's name as one more value (`mem_leak_check: mem_leak_check`), so its jobs' names end in it.
PERIODIC_MODES = frozenset({"mem_leak_check", "rerun_disabled_tests"})

#: A shard number as GitHub writes a matrix's integer into a job's name.
_SHARD_NUMBER = re.compile(r"[1-9][0-9]{0,5}")


@dataclass(frozen=True)
class PassedShards:
    """Shards a caller of a reusable workflow is passed as a string another job writes: pytorch's
    `test-matrix` (`{ include: [{ config: "default", shard: 1, num_shards: 6, runner: ... }, ...] }`
    in the build job's `with:`, handed on as `${{ needs.<build>.outputs.test-matrix }}`)."""

    job: str  # the job whose `with:` writes the list
    key: str  # that `with:` key
    groups: tuple[ShardGroup, ...]  # each configuration numbered 1..count, count >= 2
    passed_as: str = ""  # the caller's `with:` key that hands it on (the called workflow's input)


#: A shard list longer than this is not read (pytorch's longest is ~1.5 K; a list is parsed in the event loop).
SHARD_LIST_MAX_CHARS = 65536
_NEEDS_OUTPUT = re.compile(r"\$\{\{\s*needs\.([A-Za-z_][\w-]*)\.outputs\.([A-Za-z_][\w-]*)\s*\}\}")


def passed_shards(workflow: Workflow, job: JobDef, least: int = 2) -> PassedShards | None:
    """The shard list a caller is passed (`PassedShards`), when another job of the file writes it
    out; None otherwise (no such `with:`, an expression, a list that does not parse). Its groups
    are the configurations of `least` shards or more (1: every configuration it lists)."""
    jobs = workflow.data.get("jobs") if isinstance(workflow.data, dict) else None
    passed = jobs.get(job.id, {}).get("with") if isinstance(jobs, dict) and isinstance(jobs.get(job.id), dict) else None
    for passed_as, value in passed.items() if isinstance(passed, dict) else ():
        m = _NEEDS_OUTPUT.fullmatch(value.strip()) if isinstance(value, str) else None
        writer = jobs.get(m[1]) if m else None
        written = writer.get("with") if isinstance(writer, dict) else None
        text = written.get(m[2]) if m and isinstance(written, dict) else None
        if not isinstance(text, str) or len(text) > SHARD_LIST_MAX_CHARS:
            continue
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError):  # (a date that is none, an integer past Python's digits)
            continue
        include = data.get("include") if isinstance(data, dict) else None
        numbered: dict[tuple[str, str | None, int], list[int]] = {}
        for entry in include if isinstance(include, list) else ():
            if (fields := shard_entry(entry)) is not None:
                config, shard, count, runner = fields
                numbered.setdefault((config, runner, count), []).append(shard)
        groups = tuple(ShardGroup(*key) for key, shards in numbered.items()
                       if len(shards) == key[2] >= least and sorted(shards) == list(range(1, key[2] + 1)))
        if groups:
            return PassedShards(m[1], m[2], groups, str(passed_as))
    return None


def passed_runners(workflow: Workflow, job_id: str) -> tuple[str, ...]:
    """The runners of the shard list a caller is passed (`passed_shards`), each once; () when it
    is passed none the file writes out, or one that names no runner. (Read once per workflow and
    job, and kept no longer than the workflow.)"""
    known = workflow.derived.setdefault("passed_runners", {})
    if job_id not in known:
        job = workflow.jobs.get(job_id)
        passed = passed_shards(workflow, job, least=1) if job is not None else None
        known[job_id] = tuple(dict.fromkeys(group.runner for group in passed.groups if group.runner)) if passed else ()
    return known[job_id]



def list_readers(workflow: Workflow, passed: PassedShards) -> list[str]:
    """The jobs that read the list (`needs.<writer>.outputs.<key>`, in any of GitHub's spellings,
    anywhere in the job: a `with:`, a matrix, an `if:`), once for each place that reads it."""
    writer, key = re.escape(passed.job), re.escape(passed.key)
    reads = re.compile(rf"needs\s*(?:\.\s*{writer}|\[\s*'{writer}'\s*\]|\[\s*\"{writer}\"\s*\])\s*\.\s*outputs\s*"
                       rf"(?:\.\s*{key}(?![\w-])|\[\s*'{key}'\s*\]|\[\s*\"{key}\"\s*\])", re.I)  # (contexts: any case)
    jobs = workflow.data.get("jobs") if isinstance(workflow.data, dict) else None
    found = []
    for job_id, job in jobs.items() if isinstance(jobs, dict) else ():
        found += [str(job_id)] * sum(len(reads.findall(text)) for text in strings(job))
    return found


def other_readers(workflow: Workflow, passed: PassedShards, job_id: str) -> list[str]:
    """`list_readers` but one place of `job_id`'s: the others that read the list a caller is passed."""
    readers = list_readers(workflow, passed)
    if job_id in readers:
        readers.remove(job_id)
    return readers


def list_limit(workflow: Workflow, job: JobDef, passed: PassedShards, called: Mapping[str, Workflow],
               labels: tuple[str, ...], config: RepoConfig) -> tuple[float | None, str]:
    """The timeout, in minutes, of the jobs that run a caller's shard list, and whose it is (for a
    sentence); or None and why there is none: the called job's (`callee_timeout`) when the called
    file is read, or its test step's when that is shorter, else what the caller passes as
    `timeout-minutes`."""
    given = workflow.data["jobs"][job.id].get("with") or {}
    callee = local_callee(job)
    if callee in called:
        found = callee_timeout(called[callee], passed, given, labels)
        if found is None:
            return None, f"`{callee}` gives the job that runs them no timeout foldbot can tell"
        whose = f"of `{callee}`'s `{found[0]}` job"
        # The step that runs the tests may stop them sooner (pytorch's `Test`: the job's timeout less 30 minutes,
        # set by a step before it, `${{ fromJson(steps.test-timeout.outputs.timeout) }}`)
        for step in called[callee].jobs[found[0]].steps:
            if step.timeout_minutes is None or config.step_category(step) != "test":
                continue
            minutes = _known_minutes(_INPUT.sub(_given(called[callee], given), str(step.timeout_minutes)), labels)
            if minutes is None:
                whose += (f" (its `{step.name}` step's own `timeout-minutes`, "
                          f"`{' '.join(str(step.timeout_minutes).split())[:80]}`, is not known before it runs, and may "
                          "stop the tests sooner)")
            elif minutes < found[1]:
                return minutes, f"of the `{step.name}` step of `{callee}`'s `{found[0]}` job"
        return found[1], whose
    minutes = _known_minutes(given.get("timeout-minutes"), labels)
    return minutes, "this job passes" if minutes is not None else \
        f"The jobs' timeout is set in `{job.uses}`, which foldbot does not read"


def local_callee(job: JobDef) -> str | None:
    """The repository path of the reusable workflow a job calls in its own repository
    (`uses: ./.github/workflows/_rocm-test.yml`), else None."""
    uses = job.uses or ""
    return uses[2:] if uses.startswith("./.github/workflows/") and uses.endswith((".yml", ".yaml")) else None


def shard_callees(workflow: Workflow) -> list[str]:
    """The reusable workflows of this repository that its callers hand a written-out shard
    list (`passed_shards`) or a shard count as a literal (`partitions_literal`): the files whose
    jobs' timeout says how many shards fit (and, of a count, whether foldbot can change it)."""
    return sorted({path for job in workflow.jobs.values()
                   if (path := local_callee(job)) and (passed_shards(workflow, job) is not None
                                                       or _passed_partitions(with_of(workflow, job)) is not None)})


def with_of(workflow: Workflow, job: JobDef) -> Any:
    """A job's `with:` as written (None when it has none)."""
    jobs = workflow.data.get("jobs") if isinstance(workflow.data, dict) else None
    raw = jobs.get(job.id) if isinstance(jobs, dict) else None
    return raw.get("with") if isinstance(raw, dict) else None


_INPUT = re.compile(r"\binputs\.([A-Za-z_][\w-]*)")
_UNKNOWN = re.compile(r"\b(?:inputs|vars|needs|github|env|secrets|steps|job|jobs|runner|strategy)\.")


def callee_timeout(callee: Workflow, passed: PassedShards, given: Any, labels: tuple[str, ...]) -> tuple[str, float] | None:
    """The `timeout-minutes` of the called job that runs the shards (its matrix reads the input the
    list is passed as), with the caller's `with:` values (`given`) or the inputs' defaults put in
    for `inputs.<name>`: (that job's id, minutes). None when no such job or no number."""
    def reads_the_list(job: JobDef) -> bool:
        strategy = callee.data["jobs"][job.id].get("strategy")
        matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
        return isinstance(matrix, str) and re.search(rf"\binputs\.{re.escape(passed.passed_as)}\b", matrix) is not None

    runs = [job for job in callee.jobs.values() if passed.passed_as and reads_the_list(job)]
    if len(runs) != 1:
        return None
    raw = runs[0].timeout_minutes
    if raw is None:
        return runs[0].id, DEFAULT_JOB_TIMEOUT_MINUTES  # GitHub's own limit
    minutes = _known_minutes(_INPUT.sub(_given(callee, given), str(raw)), labels)
    return None if minutes is None else (runs[0].id, minutes)


def _given(callee: Workflow, given: Any) -> Callable[[re.Match[str]], str]:
    """What `inputs.<name>` (`_INPUT`) reads in a called file: what the caller passes (`given`), else
    the input's default; the expression as it is when neither is a plain value."""
    on = callee.data.get("on") if isinstance(callee.data, dict) else None
    call = on.get("workflow_call") if isinstance(on, dict) else None
    inputs = call.get("inputs") if isinstance(call, dict) else None
    given = given if isinstance(given, dict) else {}

    def value(m: re.Match[str]) -> str:
        name = m[1]
        if name in given:  # what the caller passes; an expression of its own (`${{ vars.X }}`) is not known here
            passed_value = given[name]
            return m[0] if isinstance(passed_value, (dict, list, bool)) or "${{" in str(passed_value) else str(passed_value)
        spec = inputs.get(name) if isinstance(inputs, dict) else None
        default = spec.get("default") if isinstance(spec, dict) else None
        return m[0] if default is None or isinstance(default, (bool, dict, list)) else str(default)
    return value


def shared_list(others: list[str]) -> str:
    """That other jobs read a list too (`list_readers`, less the one measured)."""
    return f"The list is read by {', '.join(f'`{o}`' for o in dict.fromkeys(others))} too, whose shards a count must fit as well"


def _known_minutes(value: Any, labels: tuple[str, ...]) -> float | None:
    """`timeout_minutes`, but None for an expression that reads a context not known here (an input,
    `vars.`, `needs.`, ...): no guess (the smallest number in it would be one)."""
    return None if isinstance(value, str) and _UNKNOWN.search(value) else timeout_minutes(value, labels)


def called_values(api_name: str) -> tuple[str, ...]:
    """The values in the parentheses that end a called job's name, as GitHub shows it in the
    caller's run: `linux-jammy-rocm-py3.10 / test (default, 1, 6, linux.rocm.gpu.2)`."""
    m = re.search(r"\(([^()]*)\)\s*$", api_name.partition(" / ")[2])
    return tuple(v.strip() for v in m[1].split(",")) if m else ()


def partition_step(job: JobDef, shards: int, config: RepoConfig) -> tuple[StepDef, str] | None:
    """The test step that carries the shard count, and the flag that carries it (`JOB_TOTAL`: the flag's
    value is `${{ strategy.job-total }}`, the matrix's own length). A test step only: its times are the
    shards' the prediction reads (a `--num-shards 4` of a data set's, or an `echo` of the count, are not)."""
    tests = [step for step in job.steps if step.run and config.step_category(step) == "test"]
    for step in tests:
        for flag in PARTITION_FLAGS:
            match = re.search(rf"{flag}[ =](\d+)\b", step.run or "")
            if match and int(match.group(1)) == shards:
                return step, flag
    for step in tests:
        if _JOB_TOTAL.search(step.run or ""):
            return step, JOB_TOTAL
    return None


def _or_inf(seconds: float | None) -> float:
    """A count that would leave a shard empty never fits."""
    return math.inf if seconds is None else seconds


def _waves(shards: int, max_parallel: int | None) -> int:
    return math.ceil(shards / max_parallel) if max_parallel else 1


def _ceil_to(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


class Fit:
    """What a matrix's runs on all its `n` shards say of any count (`Planner._fit`): the time its tests have
    (`limit`, seconds: the safety share of `limit_minutes`, whose `note` says whose when not the step's own
    timeout, `raising` which timeout to raise), and the longest shard at p90 on k shards (`p90_at`)."""

    def __init__(self, predictors: list[Callable[[int], float]], n: int, limit: float, limit_minutes: float,
                 note: str, raising: str, rest: float, log_runs: list[bool],
                 usual: dict[tuple[str, str], float], hanging: set[tuple[str, str]]) -> None:
        self.predictors, self.n, self.limit, self.limit_minutes = predictors, n, limit, limit_minutes
        self.note, self.raising, self.rest = note, raising, rest
        self.from_logs = log_runs  # (per run: read from per-file logs)
        #: (a runner, `runner_key`; a file) -> its median time where its runs' logs ended it on that runner; those
        #: killed in more of them than ended (or never): hangs, no count is said
        self.usual, self.hanging = usual, hanging
        #: run (index; past the runs of every shard, the others') -> the files killed there at a cap past the limit,
        #: which no count keeps within it -> (that cap, the usual time they are taken at, the runner), and per shard
        #: (API job id) the seconds of those caps beyond those times
        self.past: dict[int, dict[str, tuple[float, float, str]]] = {}
        self.excess: dict[int, float] = {}
        self.predictions: dict[int, list[float]] = {}  # count -> each run's longest shard (as asked for)

    @property
    def log_runs(self) -> int:
        return sum(self.from_logs)

    def beyond(self, shard: JobTiming, log: ShardLog | None) -> dict[str, tuple[float, float, str]]:
        """The files this shard's own log says were killed at a cap past the limit (in their last attempt, or in one
        a retry followed), which the runs' logs ended on its runner at least as often: each with (that cap, its usual
        time there, the runner: `runner_key`)."""
        if log is None or not (log.killed or log.retry_kills):
            return {}
        runner = runner_key(shard.labels)
        caps = {**{name: cap for name, (cap, _) in log.retry_kills.items()}, **log.killed}
        return {name: (at, self.usual[runner, name], runner) for name, at in caps.items()
                if at > self.limit and (runner, name) in self.usual and (runner, name) not in self.hanging}

    def take(self, run: int, shard: JobTiming, log: ShardLog) -> dict[str, tuple[float, float, str]]:
        """`beyond`, noted for this run (`past`) and this shard (`excess`: the seconds its killed attempts, and the
        waits for their retries, took beyond the file's usual time, or beyond the last attempt that ended it)."""
        if beyond := self.beyond(shard, log):
            self.excess[shard.api_id] = sum(log.retry_kills.get(name, (0.0, 0.0))[1]
                                            + (log.killed[name] - usual if name in log.killed else 0.0)
                                            for name, (_, usual, _) in beyond.items())
            self.past.setdefault(run, {}).update(beyond)
        return beyond

    @property
    def estimate(self) -> str:
        """What the predictions rest on, for a sentence."""
        logs, shards = self.log_runs, len(self.from_logs) - self.log_runs
        return ("per-file logs" if not shards else "shard times" if not logs
                else f"per-file logs ({_runs(logs)}) and shard times ({_runs(shards)})")

    def p90_at(self, k: int) -> float:
        if k not in self.predictions:
            self.predictions[k] = [predict(k) for predict in self.predictors]
        return percentile(self.predictions[k], 90)

    @functools.cached_property
    def best(self) -> int | None:
        """The fewest shards whose longest is within the limit at p90, if fewer than today's."""
        return next((k for k in range(1, self.n) if self.p90_at(k) <= self.limit), None)

    def needed(self) -> int | None:
        """The fewest shards beyond today's whose longest is within the limit (up to three times as many)."""
        return next((k for k in range(self.n + 1, 3 * self.n + 1) if self.p90_at(k) <= self.limit), None)


# --- the planner ---------------------------------------------------------------------------------

class Planner:
    def __init__(self, lane: Lane, runs: list[RunTiming], stats: dict[str, JobStats], config: RepoConfig,
                 logs: dict[int, ShardLog] | None = None, called: dict[str, Workflow] | None = None,
                 called_jobs: dict[str, dict[str, JobStats]] | None = None) -> None:
        self.lane = lane
        self.called = called or {}  # the reusable workflows of the repository its callers run (path -> parsed)
        self.called_jobs = called_jobs or {}  # per caller, the jobs it runs there (`called_stats`)
        self.workflow = lane.workflow
        self.runs = runs
        self.stats = stats
        self.config = config
        self.logs = logs or {}
        self.findings: list[Finding] = []
        self.overruns: list[str] = []
        self._gpu: dict[str, bool] = {}  # memo of `_is_gpu`
        self.partial_logs: dict[str, list[str]] = {}  # job id -> "k of n" shard logs, per run
        self.misplaced_logs: dict[str, list[str]] = {}  # job id -> its logs that are another shard's (`_run_log`)
        #: job id -> (file, killed) -> cut off at the step's timeout, or killed at the runner's (`_run_log`)
        self.cut_off: dict[str, dict[tuple[str, bool], CutOff]] = {}
        #: job id -> the runs where a file killed past the limit is taken at its usual time (`Fit.past`, `_taken`)
        self.hang_runs: dict[str, set[int]] = {}
        self.kill_fallbacks: dict[str, set[int]] = {}  # job id -> the runs with a kill read on their shard times
        self.kill_partials: dict[str, set[int]] = {}  # job id -> the runs with a kill that lacked a shard's job
        self.kill_retried: dict[str, set[int]] = {}  # job id -> the runs where a retry ended a file that hangs
        self.candidates: dict[str, int] = {}  # matrices looked at for a reshard -> runs read from logs
        self.counts: dict[str, int] = {}  # those matrices -> their shard count (a caller's: what it passes)
        self._stages: dict[str, StagePartitions | StageRefusal] = {}  # memo of `_staged`
        #: shard lists measured, with no change foldbot can make (`_passed_reshards`; a count another job writes, or one
        #: over several runners: `_shared_count`)
        self.by_hand: list[Finding] = []
        self.lists: list[ListReshard] = []  # shard lists the times allow on fewer shards (`_passed_reshards`)
        self._mismatches: dict[tuple[str, str], str | None] = {}
        #: a writer job and its step that writes a count, and what `_shared_count` says of it, per job reading it
        self._shared: dict[tuple[str, str], dict[str, tuple[bool, str]]] = {}
        #: matrices measured by groups of their shards (`_shared_count`): the runs whose shards' logs are read
        self.wanted: dict[str, list[tuple[JobTiming, ...]]] = {}
        self._run_of = {j.api_id: i for i, run in enumerate(runs) for j in run.jobs}  # API job -> its run
        self._cut_runs: dict[tuple[str, str, bool], set[int]] = {}  # (job, file, killed) -> the runs it was in
        self._runs_on_keys: dict[tuple[str, bool], str] = {}

    def plan(self) -> Plan:
        folds = self._folds()
        reshards = self._reshards()
        return Plan(self.lane.path, tuple(folds), tuple(reshards), tuple(self.findings),
                    overruns=tuple(self.overruns), partial_logs={k: tuple(v) for k, v in self.partial_logs.items()},
                    misplaced_logs={k: tuple(v) for k, v in self.misplaced_logs.items()},
                    cut_off={k: tuple(v.values()) for k, v in self.cut_off.items()},
                    hang_runs={k: len(v) for k, v in self.hang_runs.items()},
                    kill_fallbacks={k: len(v) for k, v in self.kill_fallbacks.items()},
                    kill_partials={k: len(v) for k, v in self.kill_partials.items()},
                    kill_retried={k: len(v) for k, v in self.kill_retried.items()},
                    reshard_candidates=dict(self.candidates), shard_counts=dict(self.counts),
                    wanted_runs={k: tuple(v) for k, v in self.wanted.items()},
                    by_hand=tuple(self.by_hand), lists=tuple(self.lists))

    # fold ------------------------------------------------------------------------------------

    def _is_gpu(self, job: JobDef) -> bool:
        """Whether the job runs on AMD runners: by the labels it was measured on, else its file's `runs-on`
        (asked of every suite and host pair: read once a job)."""
        gpu = self._gpu.get(job.id)
        if gpu is None:
            stats = self.stats.get(job.id)
            gpu = self._gpu[job.id] = self.config.is_amd_runner(stats.labels) if stats and stats.labels else \
                declared_amd(job, self.config, self.workflow) is True
        return gpu

    def _folds(self) -> list[Fold]:
        """Short suites into a host of the same runners, stage, gate and setup: shard 0 of a
        matrix (SGLang's PR #34483) or a standalone job. The suite with the fewest hosts goes
        first (then the shortest), into the host the fewest suites still to place could take,
        a matrix before a standalone job, then the one with most headroom; so one suite does
        not take the only host of another. A job that takes a suite is not folded itself, one
        folded away takes none; a standalone job may take several, shard 0 one."""
        suites: list[tuple[JobDef, JobStats]] = []
        for job in self.workflow.jobs.values():
            if job.uses and job.id in self.stats:  # measured, but its jobs are written in another file
                raw = self.workflow.data["jobs"][job.id]
                self.findings.append(Finding(job.id, _reusable(job, passed_shards(self.workflow, job),
                                                               self.called_jobs.get(job.id, {}), self.config,
                                                               raw.get("with") if isinstance(raw, dict) else None,
                                                               self._stage(job) if self._is_gpu(job) else None,
                                                               self._refusal(job))))
            if job.uses or not job.steps or job.shard_count > 1 or not self._is_gpu(job):
                continue
            stats = self.stats.get(job.id)
            if job.matrix_expression:  # as many jobs as its expression gives (transformers' `fromJson` model
                # slices): never a suite to fold, a host or resharded, however long its tests, and the report says so
                self._left_measured(job, f"{_expression(job, self.workflow)}: it is not folded, resharded or taken as "
                                         "a host", self._expressed_count(job))
                continue
            if stats is None or stats.samples == 0:
                self.findings.append(Finding(job.id, self._no_tests(job)))
                continue
            if stats.work.p90 > self.config.fold_max_test_minutes * 60:
                continue  # a long suite (its tests, and the other steps that would move with them): worth its setup
            if read := self._read_elsewhere(job):
                self.findings.append(Finding(job.id, f"{read}: it is not folded"))
                continue
            if anchors := self._anchored.get(job.id):
                self.findings.append(Finding(job.id, f"YAML anchors tie it to the rest of the file ("
                                                     f"{', '.join(f'`{a}`' for a in anchors)}: defined in its job and "
                                                     "aliased elsewhere, or aliased in its job), which a fold would "
                                                     "leave naming nothing: it is not folded"))
                continue
            if stats.share < self.config.fold_min_setup_share:
                self.findings.append(Finding(job.id, f"setup is only {stats.share:.0%} of its time"))
                continue
            suites.append((job, stats))
        hosts = [h for h in self.workflow.jobs.values() if not h.uses and h.steps and (
            h.shard_count > 1 or (not h.matrix_expression and self._is_gpu(h)))]
        # Where each suite could go, were every host free (the order below rests on it).
        options = {job.id: {h.id for h in hosts if h.id != job.id and self._host_mismatch(job, h) is None
                            and self._measured(h) and isinstance(self._fold_into(job, stats, h, []), Fold)}
                   for job, stats in suites}
        order = {job_id: i for i, job_id in enumerate(self.workflow.jobs)}
        suites.sort(key=lambda w: (not options[w[0].id], len(options[w[0].id]), w[1].test.p90, order[w[0].id]))
        folds: list[Fold] = []
        taken: dict[str, list[Fold]] = {}  # host -> the folds into it
        moved: set[str] = set()
        unplaced: list[tuple[str, dict[str, list[str]]]] = []
        for i, (job, stats) in enumerate(suites):
            if job.id in taken:
                continue  # it takes another suite's steps
            later = [w[0].id for w in suites[i + 1:] if w[0].id not in taken]
            wanted = {h: sum(h in options[s] for s in later) for h in options[job.id]}
            reasons: dict[str, list[str]] = {}
            fold = self._best_host(job, stats, taken, [h for h in hosts if h.id not in moved], reasons,
                                   waiting=frozenset(later), wanted=wanted)
            if fold:
                folds.append(fold)
                taken.setdefault(fold.into, []).append(fold)
                moved.add(job.id)
            else:
                unplaced.append((job.id, reasons))
        for job_id, reasons in sorted(unplaced, key=lambda u: order[u[0]]):
            if job_id in taken:
                continue  # it became a host after all
            detail = "; ".join(f"{_some(ids)}: {why}" for why, ids in reasons.items()) or self._no_host(job_id)
            self.findings.append(Finding(job_id, f"short suite with no host to fold into ({detail})"))
        return sorted(folds, key=lambda f: order[f.job])

    def _no_host(self, suite: str) -> str:
        """Why no job could be weighed as the suite's host: there is none on AMD runners, or
        those there are run a reusable workflow or a matrix an expression gives."""
        others = [job for job in self.workflow.jobs.values() if job.id != suite and self._is_gpu(job)]
        called = [job.id for job in others if job.uses]
        expressed = [job.id for job in others if not job.uses and job.shard_count < 2 and job.matrix_expression]
        if not (called or expressed):
            return "no other job on AMD runners in this lane"
        return "; ".join(part for part in (
            called and f"{_some(called)} run{'s' if len(called) == 1 else ''} a reusable workflow",
            expressed and f"{_some(expressed)}'s matri{'x comes' if len(expressed) == 1 else 'ces come'} from an "
                          "expression") if part) + ": no other job on AMD runners could take it"

    @functools.cached_property
    def _anchored(self) -> dict[str, list[str]]:
        """Per job, the YAML anchors that tie it to the rest of the file (Actions reads them since 2025):
        those its text defines and the file aliases outside it (aiter-style `- &checkout` steps in the
        suite's job, `- *checkout` in the host's), and those its text aliases (`*install` in its test
        step, which would move into the host and leave its anchor behind). A fold removes the job and
        moves its steps: the aliases would name nothing, and the file would not parse."""
        text = self.workflow.text
        if not _may_anchor(text):
            return {}
        spans = [(job.id, job.node.start_mark.index, job.node.end_mark.index) for job in self.workflow.jobs.values()]
        owner: dict[str, str | None] = {}  # anchor -> the job whose text defines it (the latest definition counts)
        tied: dict[str, dict[str, None]] = {}
        for event, at in yaml_events(text):
            anchor = getattr(event, "anchor", None)
            if anchor is None:
                continue
            inside = next((job_id for job_id, start, end in spans if start <= at < end), None)
            if not isinstance(event, yaml.AliasEvent):
                owner[anchor] = inside
                continue
            if inside is not None:
                tied.setdefault(inside, {})[anchor] = None
            if (defined := owner.get(anchor)) is not None and defined != inside:
                tied.setdefault(defined, {})[anchor] = None
        return {job_id: list(anchors) for job_id, anchors in tied.items()}

    def _no_tests(self, job: JobDef) -> str:
        """Why a job has no sample: it never ran, or it ran but no step of it is a test (a
        build-only job, or a test step named otherwise: "Could not measure" says which)."""
        ran = sum(any(j.workflow_job == job.id and j.conclusion not in (None, "skipped") for j in run.amd_jobs)
                  for run in self.runs)
        if not ran:
            # its jobs' name fits other jobs as well: they ran, but which job's they are is not known
            alike = {other for run in self.runs for j in run.amd_jobs if job.id in j.ref.ambiguous and j.ran_tests
                     for other in j.ref.ambiguous if other != job.id}
            if alike:
                return (f"its runs' jobs cannot be told from {_some(sorted(alike))}'s (one name fits them all: see "
                        "\u201cCould not measure\u201d), so none is counted as its")
            return "no run in the history ran its tests"
        cancelled = sum(any(j.workflow_job == job.id and any(s.category == "test" and s.conclusion == "cancelled"
                                                             for s in j.work_steps) for j in run.amd_jobs)
                        for run in self.runs)
        if cancelled:  # (a newer push's run replaced these, `cancel-in-progress`: no length of its tests is known)
            return (f"its tests were cancelled part-way in {_runs(cancelled)} of the {ran} it ran in, and none ran to "
                    "the end: a cancelled test step is no sample of how long they take")
        stopped = sum(any(j.workflow_job == job.id and j.stopped_before_tests for j in run.amd_jobs) for run in self.runs)
        if stopped == ran:  # (its test steps there, skipped after a failed build or install)
            return (f"it failed before its tests in each of the {_runs(ran)} it ran in, so no run measured them (see "
                    "\u201cCould not measure\u201d)" if ran > 1 else
                    "it failed before its tests in the one run it ran in, so no run measured them (see \u201cCould not "
                    "measure\u201d)")
        return f"it ran in {_runs(ran)}, but no step of it counts as a test (see \u201cCould not measure\u201d)"

    def _measured(self, job: JobDef) -> bool:
        stats = self.stats.get(job.id)
        return bool(stats and stats.samples)

    @functools.cached_property
    def _needs_read(self) -> dict[str, frozenset[str]]:
        """Per job: the `needs.<id>` it reads (read once: every short suite asks of every job)."""
        return {job_id: frozenset(context_keys(tree_expressions(raw), "needs"))
                for job_id, raw in (self.workflow.data.get("jobs") or {}).items() if isinstance(raw, dict)}

    def _read_elsewhere(self, suite: JobDef) -> str | None:
        """Why the suite's job id is read elsewhere, so that it must stay a job: another job's
        `if:`, step or input reads its `needs.<id>` (its outputs or result), or the workflow's
        outputs its `jobs.<id>` (`on.workflow_call.outputs`): gone, it reads as empty (a gate
        never opens, an output is lost); or a job that needs it passes its id to an action
        (alls-green's `allowed-failures`: the suite may fail, which the host may not).
        (`needs.*.result` reads whatever jobs are needed: the host's result there.)"""
        own = suite.id.lower()
        named = re.compile(rf"(?i)(?<![\w-]){re.escape(suite.id)}(?![\w-])")
        gone = f"reads `needs.{suite.id}` (its outputs or result), which would be empty once the job is gone"
        for job_id, raw in (self.workflow.data.get("jobs") or {}).items():
            if job_id == suite.id or not isinstance(raw, dict):
                continue
            if own in self._needs_read[job_id]:
                return f"`{job_id}` {gone}"
            job = self.workflow.jobs.get(job_id)
            if job is None or suite.id not in job.needs:
                continue
            if any(named.search(text) for text in strings(raw.get("with"))):
                return (f"`{job_id}` passes its id to `{job.uses or 'its action'}` (`with:`), which would name no job "
                        "once it is gone")
            for step in job.steps:
                if step.uses and any(named.search(text) for text in strings(step.with_)):
                    return (f"`{job_id}` passes its id to `{step.uses}` (`with:`; alls-green's `allowed-failures`?), "
                            "which would name no job once it is gone")
        trigger = self.workflow.data.get("on", self.workflow.data.get(True))  # (YAML 1.1 reads a bare `on` as True)
        if own in context_keys(tree_expressions(trigger), "jobs"):
            return f"the workflow's `on:` {gone}"
        return None

    def _best_host(self, suite: JobDef, stats: JobStats, taken: dict[str, list[Fold]], hosts: list[JobDef],
                   reasons: dict[str, list[str]], *, waiting: frozenset[str], wanted: dict[str, int]) -> Fold | None:
        """The best host among `hosts` (see `_folds`): one that is not a suite still `waiting`
        to be placed (it would fold no more itself), the fewest waiting suites could take
        (`wanted`), a matrix, one taking fewer suites already, most headroom. Why each other
        one is not, into `reasons` (reason -> host ids)."""
        candidates: list[Fold] = []
        for host in hosts:
            if host.id == suite.id:
                continue
            why = self._host_mismatch(suite, host)
            earlier = taken.get(host.id, [])
            if not why and earlier and host.shard_count > 1:
                why = "already takes another suite"
            if not why and not self._measured(host):
                why = "no run in the history ran its tests, so its time after the fold is unknown"
            if not why:
                fold = self._fold_into(suite, stats, host, earlier)
                if isinstance(fold, Fold):
                    candidates.append(fold)
                    continue
                why = fold
            reasons.setdefault(why, []).append(host.id)
        if not candidates:
            return None
        return max(candidates, key=lambda f: (f.into not in waiting, -wanted.get(f.into, 0), not f.standalone,
                                              -len(taken.get(f.into, ())),
                                              f.host_limit_minutes - f.host_budget_minutes, f.into))

    def _host_mismatch(self, suite: JobDef, host: JobDef) -> str | None:
        """Why `suite` cannot fold into `host` as the two are written (None: it can). Asked
        of every pair more than once, and the same each time: kept."""
        key = (suite.id, host.id)
        if key not in self._mismatches:
            self._mismatches[key] = self._mismatch(suite, host)
        return self._mismatches[key]

    def _runs_on(self, job: JobDef, first: dict[str, Any]) -> str:
        """`_runs_on_key`, kept per job: `first` is {} for a suite, and for a host the first
        value of its shard axis, the same each time it is asked."""
        key = (job.id, bool(first))
        found = self._runs_on_keys.get(key)
        if found is None:
            found = self._runs_on_keys[key] = _runs_on_key(job, first)
        return found

    def _mismatch(self, suite: JobDef, host: JobDef) -> str | None:
        if not self._is_gpu(host):  # (first: a CPU matrix is no host whatever its form: nod-ai/shark-ai's `test`)
            return "runs on other runners"
        if host.matrix_expression:
            return _expression(host)
        if isinstance(host.matrix, dict) and (host.matrix.get("include") or host.matrix.get("exclude")) and \
                (host.shard_count > 1 or host.one_combination is None):
            return "its matrix uses include/exclude"
        axis = shard_axis(host)
        if axis is None and host.shard_count > 1:
            return "its matrix has more than one axis with several values"
        first = {axis[0]: axis[1][0]} if axis else {}
        if self._runs_on(host, first) != self._runs_on(suite, {}):
            return "runs on other runners"
        host_stats, suite_stats = self.stats.get(host.id), self.stats.get(suite.id)
        if host_stats and suite_stats and host_stats.labels and suite_stats.labels:
            if set(host_stats.labels) != set(suite_stats.labels):
                return "measured on other runner labels"
        if set(host.needs) != set(suite.needs):
            return "sits in another stage (different `needs`)"
        if suite.id in host.needs or host.id in suite.needs:
            return "one depends on the other"
        if _gate(host) != _gate(suite):
            return "gated by a different `if:`"
        host_raw = self.workflow.data["jobs"][host.id]
        suite_raw = self.workflow.data["jobs"][suite.id]
        for key_name in _ENVIRONMENT_KEYS:  # (one the host alone has changes the suite too: its `env`, its container,
            if suite_raw.get(key_name) != host_raw.get(key_name):  # a `continue-on-error` that hides the suite's failure)
                return f"different job-level `{key_name}`"
        strategy = host_raw.get("strategy")
        fail_fast = strategy.get("fail-fast", True) if isinstance(strategy, dict) else True
        if host.shard_count > 1 and fail_fast is not False:
            said = "may be fail-fast (`fail-fast` is an expression)" if isinstance(fail_fast, str) else \
                "is fail-fast (GitHub's default without `fail-fast: false`)"
            return f"its matrix {said}: a failed shard would cancel shard 0, and the suite's tests with it"
        category = self.config.step_category
        host_setup = {s.identity for s in host.steps if category(s) == "setup"}
        for step in suite.steps:
            if category(step) == "setup" and step.identity not in host_setup:
                return f"its setup lacks the suite's step `{step.name}`"
        tests = [s.index for s in host.steps if category(s) == "test"]
        if not tests:
            return "has no test step to follow"
        extra = _extra_setup(suite, host, category)
        for step in host.steps[: tests[-1] + 1]:  # its steps before the moved ones
            if _sets_env(step) and (category(step) != "setup" or step.name in extra):
                return (f"its step `{step.name}`, which the suite's job has not, writes `$GITHUB_ENV` or `$GITHUB_PATH`: "
                        "the suite's steps would run with what it sets")
        for other in self.workflow.jobs.values():  # an aggregator (`check-all-jobs`) counts both, or neither
            if other.id not in (suite.id, host.id) and (suite.id in other.needs) != (host.id in other.needs):
                if suite.id in other.needs:
                    return f"`{other.id}` needs the suite but not this job: after the fold it would count this job's failures too"
                return f"`{other.id}` needs this job but not the suite: after the fold it would count the suite's failures too"
        return self._moved_steps_mismatch(suite, host)

    def _moved_steps_mismatch(self, suite: JobDef, host: JobDef) -> str | None:
        """Why the suite's steps would not mean the same in the host: a matrix value or a
        step they read that the host has not (there it reads as empty), or a step id twice."""
        moving, refused = suite.fold_steps(host, self.config.step_category)
        if refused:
            return refused
        host_ids = {s.step_id for s in host.steps if s.step_id}
        moved_ids = {s.step_id for s in moving if s.step_id}
        if clash := sorted(moved_ids & host_ids):
            return f"its steps have the suite's step ids {', '.join(f'`{i}`' for i in clash)} too"
        suite_axes, host_axes = _matrix_values(suite), _matrix_values(host)
        for step in moving:
            for key in step.contexts("matrix"):
                if not key:
                    return f"the suite's step `{step.name}` reads the whole `matrix`, which is the host's there"
                if suite_axes.get(key) is None or suite_axes.get(key) != host_axes.get(key):
                    return f"the suite's step `{step.name}` reads `matrix.{key}`, which the host's matrix does not give it"
            for key in step.contexts("strategy"):
                return f"the suite's step `{step.name}` reads `strategy{'.' + key if key else ''}`, the host's there"
            for key in step.contexts("job"):
                return f"the suite's step `{step.name}` reads `job{'.' + key if key else ''}`, the host's there"
            if "job" in step.contexts("github") or re.search(r"\bGITHUB_JOB\b", step.run or ""):
                return f"the suite's step `{step.name}` reads the job's id (`github.job`), the host's there"
            for ref in step.contexts("steps"):
                if ref not in {i.lower() for i in moved_ids | host_ids}:
                    return f"the suite's step `{step.name}` reads `steps{'.' + ref if ref else ''}`, a step the host does not have"
        return None

    def _fold_into(self, suite: JobDef, stats: JobStats, host: JobDef, earlier: list[Fold]) -> Fold | str:
        """The fold of `suite` into `host`, after the suites `earlier` folded there (their
        steps come first, and their timeouts count in the host's budget); or why not."""
        axis = shard_axis(host) if host.shard_count > 1 else None
        key, value = (axis[0], axis[1][0]) if axis else (None, None)
        moving, _ = suite.fold_steps(host, self.config.step_category)
        own_ids = {s.step_id for s in moving if s.step_id}
        for other in earlier:
            theirs = {s.step_id for s in self.workflow.jobs[other.job].fold_steps(host, self.config.step_category)[0]}
            if clash := sorted(own_ids & theirs):
                return (f"`{other.job}`, folded there too, has the suite's step ids "
                        f"{', '.join(f'`{i}`' for i in clash)}")
        host_stats = self.stats[host.id]  # (a host is measured: `_best_host`)
        labels = host_stats.labels
        own = [timeout_minutes(s.timeout_minutes, labels) for s in moving]
        provisional = min(stats.samples, host_stats.samples) < self.config.min_samples
        step_p90_min = max((stats.step_p90(s.name) for s in moving), default=0.0) / 60
        own_total = sum(t if t is not None else DEFAULT_JOB_TIMEOUT_MINUTES for t in own)
        tighter = max(10, _ceil_to(3 * step_p90_min, 5)) * len(moving) if step_p90_min > 0 else None
        if tighter is not None and tighter < own_total and not provisional:
            new_timeout = tighter // len(moving)
            three = 3 * step_p90_min
            how = (f" = 3 x its p90 of {step_p90_min:.2f} min ({three:.2f}), rounded up to a multiple of 5"
                   if _ceil_to(three, 5) >= 10 else
                   f", the least foldbot gives (3 x its p90 of {step_p90_min:.2f} min is {three:.2f})")
            note = f"{new_timeout} min{how} (its own {'step' if len(own) == 1 else 'steps'} had {_fmt_timeouts(own)})"
        else:
            new_timeout = int(max((t for t in own if t is not None), default=DEFAULT_JOB_TIMEOUT_MINUTES))
            note = f"{new_timeout} min, as its own {'step' if len(own) == 1 else 'steps'} had"
        # Shard 0 of the host after the fold: p90 setup + each step's timeout (measured p90 without one).
        setup_p90 = host_stats.setup.p90 / 60
        budget = setup_p90
        for step in host.steps:
            if self.config.step_category(step) == "setup":
                continue
            limit = timeout_minutes(step.timeout_minutes, labels)
            if limit is None:
                limit = host_stats.step_p90(step.name) / 60
            budget += limit
        earlier_minutes = sum(f.timeout_minutes * len(f.steps) for f in earlier)
        budget += new_timeout * len(moving) + earlier_minutes
        job_limit = DEFAULT_JOB_TIMEOUT_MINUTES if host.timeout_minutes is None else \
            timeout_minutes(host.timeout_minutes, labels)
        if job_limit is None:  # (not GitHub's 360: a timeout is written, only not known before a run starts)
            return (f"its `timeout-minutes` (`{' '.join(str(host.timeout_minutes).split())[:80]}`) is not known before "
                    "it runs: whether the suite's steps fit in it cannot be checked")
        if budget > job_limit:
            also = f", with {_some([f.job for f in earlier])} folded there too" if earlier else ""
            return (f"{'it' if key is None else f'shard {value}'} would need {budget:.0f} min (p90 setup "
                    f"{setup_p90:.0f} + step timeouts{also}) but the job allows {job_limit:.0f}")
        return Fold(
            job=suite.id,
            into=host.id,
            shard_key=key,
            shard_value=value,
            steps=tuple(s.name for s in moving),
            timeout_minutes=new_timeout,
            timeout_note=note,
            samples=stats.samples,
            suite_setup_median_s=stats.setup.median,
            suite_test_median_s=stats.test.median,
            suite_test_p90_s=stats.test.p90,
            suite_other_median_s=stats.other.median,
            suite_share=stats.share,
            host_budget_minutes=budget,
            host_limit_minutes=job_limit,
            runner_seconds_saved=stats.setup.median,
            provisional=provisional,
            selected_by_id=_picked_by_id(suite),
            earlier_minutes=earlier_minutes,
            host_extra_setup=_extra_setup(suite, host, self.config.step_category),
        )

    # reshard ---------------------------------------------------------------------------------

    def _reshards(self) -> list[Reshard]:
        out = []
        for job in self.workflow.jobs.values():
            if job.uses and job.id in self.stats and self._is_gpu(job):
                self._passed_reshards(job, self.stats[job.id])
                if stage := self._stage(job):  # (its count is this job's `with:`: resharded as a matrix is)
                    out += filter(None, [self._reshard(job, stage)])
            # A caller's matrix passes values to another file's jobs: its finding above says what to do.
            if job.shard_count < 2 or not self._is_gpu(job) or job.uses:
                continue
            reshard = self._reshard(job)
            if reshard:
                out.append(reshard)
        return out

    def _staged(self, job: JobDef) -> StagePartitions | StageRefusal:
        """The shard count this caller passes a reusable workflow, as foldbot can change it, or why it cannot (read
        once a job)."""
        if job.id not in self._stages:
            stats = self.stats.get(job.id)
            self._stages[job.id] = _stage(self.workflow, job, self.called, self.config, stats.labels if stats else ())
        return self._stages[job.id]

    def _stage(self, job: JobDef) -> StagePartitions | None:
        """The shard count this caller passes a reusable workflow, as foldbot can change it (`stage_partitions`)."""
        found = self._staged(job)
        return found if isinstance(found, StagePartitions) else None

    def _refusal(self, job: JobDef) -> StageRefusal | None:
        """Why the shard count this caller passes as JSON is not one foldbot changes (None when it passes none)."""
        found = self._staged(job)
        return found if isinstance(found, StageRefusal) and _passed_partitions(with_of(self.workflow, job)) else None

    def _reshard(self, job: JobDef, stage: StagePartitions | None = None) -> Reshard | None:
        """A matrix on fewer shards, when its measured times allow it; or (`stage`) the shards a caller's
        reusable workflow runs, by the count the caller passes it."""
        if stage is not None:
            key, values, step, flag, n = stage.axis, list(range(stage.count)), stage.step, stage.flag, stage.count
            max_parallel = stage.max_parallel
        else:
            if job.matrix_expression:
                self.findings.append(Finding(job.id, f"{_expression(job, self.workflow)}; shard count left alone"))
                return None
            axis = shard_axis(job)
            if axis is None:
                self._left_measured(job, _unaxed(job), self._over_runners(job))
                return None
            key, values = axis
            n = len(values)
            if not all(type(value) in (int, str) and _number(value) for value in values):
                # GPUs, systems, configurations: not shards of one suite
                shown = ", ".join(_short(value) for value in values[:4]) + (", ..." if n > 4 else "")
                self.findings.append(Finding(job.id, f"its matrix varies `{key}` ({shown}), not a shard number; "
                                                     "nothing to reshard"))
                return None
            found = partition_step(job, n, self.config)
            if found is None:
                self.findings.append(Finding(job.id, f"no test command carries the shard count {n} in a flag foldbot "
                                                     f"rewrites ({', '.join(f'`{f}`' for f in PARTITION_FLAGS)}, or "
                                                     f"`${{{{ {JOB_TOTAL} }}}}`): a count it cannot change with the matrix"))
                return None
            step, flag = found
            max_parallel = job.max_parallel
        stats = self.stats.get(job.id)
        labels = stats.labels if stats is not None else ()
        if stage is not None:
            step_minutes, job_minutes, unknown, runs_in = stage.step_minutes, stage.job_minutes, stage.unknown, stage.job
        else:
            step_minutes, job_minutes, unknown = read_limits(step.timeout_minutes, job.timeout_minutes, labels)
            runs_in = job
        if unknown:  # (no count is said: its logs are not read for one either)
            whose, raw = (f"`{runs_in.id}` job", runs_in.timeout_minutes) if unknown == "job" else \
                (f"`{step.name}` step", step.timeout_minutes)
            where = f"its {n} shards (`with: {stage.key}:`) run in `{stage.callee}`, whose " if stage is not None else "its "
            passes = ", with what this job passes" if stage is not None else ""
            self.findings.append(Finding(job.id, (
                f"{where}{whose}'s `timeout-minutes` (`{' '.join(str(raw).split())[:80]}`{passes}) is not known before "
                "it runs: how many shards fit is not said")))
            return None
        assert job_minutes is not None
        self.candidates[job.id] = 0
        self.counts[job.id] = n
        if stats is None:
            self.findings.append(Finding(job.id, self._no_tests(job)))
            return None
        full_runs = [shards for shards in stats.per_run if len(shards) == n]
        if not full_runs:
            self.findings.append(Finding(job.id, f"no run in the history ran all {n} shards"))
            return None
        others = [shards for shards in stats.per_run if len(shards) != n]
        fit = self._fit(job, full_runs, key, values, step, step_minutes, job_minutes, runs_in, others=others)
        hung = self._hangs(job.id, full_runs + others, fit)  # (`fit.past`'s indexes: these runs, then the others)
        said, files, hung_runs = self._taken([(job.id, full_runs + others, fit)], (c.file for c in hung))
        self.candidates[job.id] = fit.log_runs
        p90_at, predictions, best, limit, estimate = fit.p90_at, fit.predictions, fit.best, fit.limit, fit.estimate
        limit_minutes, note, raising, rest = fit.limit_minutes, fit.note, fit.raising, fit.rest
        # A file that ran longer than the limit by itself, cut off before it ended: no count fits it.
        alone = self._too_long_alone(job.id, limit)
        # A file the runner killed at `--timeout-per-file` in more runs than it ended in, on some runner, hangs
        # (`hung`): it takes that cap on any count, more shards would not make it end, and its time says nothing
        # of how many the suite needs, so no count is said. One killed past the limit in fewer runs is taken at
        # its usual time there, and said (`said`, `_taken`).
        them = f"{said}. {with_usual(files)}" if said else ""
        overrun = self._overrun(runs_in.id, step, stats, step_minutes, job_minutes, more_shards=not alone and not hung,
                                excess=lambda j: fit.excess.get(j.api_id, 0.0))
        cut = " (of runs whose shard times stop where a file was cut off: at least that many)" \
            if any(not c.killed for c in self.cut_off.get(job.id, {}).values()) else ""
        if overrun:
            needed = fit.needed()
            more = (f"; {_no_count_fits(alone, hung, raising, limit)}" + (f"; {said}" if said else "")
                    if alone or hung else
                    f"; {them}about {needed} shards would keep the longest within {limit / 60:.0f} min ({estimate}){cut}"
                    if needed else f"; {said}" if said else "")
            self.findings.append(Finding(job.id, overrun + more))
            self.overruns.append(job.id)
            return None
        if best is None or hung:  # (while a test hangs, no count is said: fewer shards neither)
            bound = (f"limit {limit / 60:.0f} min = {self.config.reshard_safety:.0%} of {limit_minutes:.0f}"
                     f"{f' ({note})' if note else ''}; {estimate}")
            if hung and p90_at(n) <= limit:
                reason = (f"today's {n} shards run {p90_at(n) / 60:.0f} min at p90 ({bound}); "
                          + _no_count_fits(alone, hung, raising, limit))
            elif p90_at(n) <= limit:
                reason = f"{n} shards are needed: {n - 1} would run {p90_at(n - 1) / 60:.0f} min at p90 ({bound})"
            else:  # not even today's count is within the limit: "needed" would mislead
                needed = fit.needed()
                reason = (f"no fewer shards: today's {n} already run {p90_at(n) / 60:.0f} min at p90 ({bound}); "
                          + (_no_count_fits(alone, hung, raising, limit) if alone or hung else
                             f"about {needed} would keep the longest within the limit{cut}" if needed else
                             f"no count up to {3 * n} keeps the longest within it: a test file may take longer alone"))
            self.findings.append(Finding(job.id, them + reason))
            return None
        setup_median = stats.setup.median
        longest_now = median(max((j.step_seconds(step.name) or j.test_seconds) - fit.excess.get(j.api_id, 0.0) for j in shards)
                             for shards in full_runs)
        waves_before, waves_after = _waves(n, max_parallel), _waves(best, max_parallel)
        wall_before = waves_before * (setup_median + longest_now)
        wall_after = waves_after * (setup_median + median(predictions[best]))
        neutral = None
        if wall_after - wall_before >= 60:  # slower: the fewest shards that keep the wall clock
            p90_at(best)
            neutral = next((k for k in range(best + 1, n) if p90_at(k) <= limit
                            and _waves(k, max_parallel) * (setup_median + median(predictions[k])) <= wall_before), None)
        if elsewhere := count_elsewhere(self.workflow, job.id, n):  # (the patch would leave it behind)
            self.findings.append(Finding(job.id, them + (
                f"the times allow {best} shards (the longest {p90_at(best) / 60:.0f} min at p90, within "
                f"{limit / 60:.0f} min; {estimate}), but its {n} are also counted in {elsewhere}, which the patch would "
                "leave behind: change both by hand")))
            return None
        return Reshard(
            job=job.id,
            shard_key=key,
            from_count=n,
            to_count=best,
            flag=flag,
            step=step.name,
            estimate=estimate,
            predicted_longest_p90_s=p90_at(best),
            limit_s=limit,
            timeout_minutes=limit_minutes,
            samples=len(full_runs),
            setup_median_s=setup_median,
            wall_before_s=wall_before,
            wall_after_s=wall_after,
            provisional=len(full_runs) < self.config.min_samples,
            max_parallel=max_parallel,
            waves_before=waves_before,
            waves_after=waves_after,
            log_runs=fit.log_runs,
            neutral_count=neutral,
            neutral_wall_after_s=(_waves(neutral, max_parallel) * (setup_median + median(predictions[neutral]))
                                  if neutral else 0.0),
            passed_as=stage.key if stage else None,
            callee=stage.callee if stage else None,
            labels=stats.labels,
            timeout_note=note,
            rest_p90_s=rest,
            step_minutes=step_minutes,
            hung_runs=hung_runs,
            hung_past=said,
            hung_files=files,
        )

    def _passed_reshards(self, job: JobDef, stats: JobStats) -> None:
        """What the measured times allow for each configuration of a shard list this caller is
        passed (`passed_shards`): fewer shards where the called job's timeout allows them (a
        `ListReshard`, which the patch makes in the list's text), else said (`by_hand`)."""
        passed = passed_shards(self.workflow, job)
        if passed is None:
            return
        configs = [group.config for group in passed.groups]
        trims: list[ListTrim] = []
        runs_read: list[int] = []
        trimmed: list[tuple[ShardGroup, float]] = []  # (group, its longest shard on the new count, p90)
        named = [[(called_values(j.name), j) for j in run] for run in stats.per_run]  # (once: read per group)
        limit_minutes, whose = list_limit(self.workflow, job, passed, self.called, stats.labels, self.config)
        for group in passed.groups:
            label = f"`{group.config}`" + ((f" on `{group.runner}`" if group.runner is not None else " with no runner")
                                          if configs.count(group.config) > 1 else "")
            n = group.count
            full = []
            told_apart = True
            for run in named:
                numbered = [(int(values[1]), j) for values, j in run if group.holds(values)]
                shards = dict(numbered)
                told_apart &= len(shards) == len(numbered)
                if sorted(shards) == list(range(1, n + 1)):
                    full.append([j.test_seconds for j in shards.values()])
            if not told_apart:
                self.by_hand.append(Finding(job.id, (
                    f"{label} runs {n} shards (`num_shards` in `{passed.job}`'s `{passed.key}`); its jobs' names do not "
                    "tell its shards from another configuration's (a shard number ran twice in one run: a configuration "
                    "listed on several runners whose jobs' names do not say the runner, or also with none), so nothing "
                    "is said of fewer")))
                continue
            if not full:
                self.by_hand.append(Finding(job.id, f"{label} runs {n} shards (`num_shards` in `{passed.job}`'s "
                                                    f"`{passed.key}`); no run in the history ran all {n} of them, so "
                                                    "nothing is said of fewer"))
                continue
            # Each run's tests on k shards: its shards' total over k, as unevenly as today (one shard: the total).
            runs = [(sum(times), max(times) / (sum(times) / n) if sum(times) else 1.0) for times in full]

            def p90_at(k: int) -> float:
                return percentile([total if k == 1 else total / k * imbalance for total, imbalance in runs], 90)

            setup = median(j.setup_seconds for run in named for values, j in run if group.holds(values))
            moded = sorted({value for run in named for values, _ in run if values[:1] == (group.config,)
                            for value in values[4:] if value in PERIODIC_MODES})
            measured = (f"{label} runs {n} shards (`num_shards` in `{passed.job}`'s `{passed.key}`); over "
                        f"{_runs(len(full))} its tests took {median(total for total, _ in runs) / 60:.0f} min per run "
                        f"(median), the longest shard {p90_at(n) / 60:.0f} min (p90)"
                        + (f" (its copies in pytorch's periodic modes, {', '.join(f'`{m}`' for m in moded)}, left out: "
                           "another configuration, with a timeout of its own)" if moded else ""))
            each = f"each shard fewer saves one setup of {setup / 60:.0f} min (median)"
            if limit_minutes is None:
                fewer = ", ".join(f"{k} \u2192 {p90_at(k) / 60:.0f} min" for k in range(n - 1, max(n - 4, 0), -1))
                self.by_hand.append(Finding(job.id, (
                    f"{measured}. On fewer shards the longest would take about {fewer} (p90, today's shard times "
                    f"scaled); {each}. {whose}: weigh these against it, and change the list by hand")))
                continue
            limit = self.config.reshard_safety * limit_minutes * 60
            best = next((k for k in range(1, n) if p90_at(k) <= limit), None)
            bound = f"{self.config.reshard_safety:.0%} of the {limit_minutes:.0f}-min `timeout-minutes` {whose}"
            if best is None:
                self.by_hand.append(Finding(job.id, (
                    f"{measured}. {n} shards are needed: on {n - 1} the longest would take about "
                    f"{p90_at(n - 1) / 60:.0f} min (p90), over {bound}")))
                continue
            trims.append(ListTrim(group.config, group.runner, n, best, p90_at(n), p90_at(best), limit, limit_minutes,
                                  setup, len(full), (
                f"{measured}. On {best} the longest would take about {p90_at(best) / 60:.0f} min (p90, today's shard "
                f"times scaled), within {bound}; {each}")))
            runs_read.append(len(full))
            trimmed.append((group, p90_at(best)))
        others = other_readers(self.workflow, passed, job.id)
        if trims and others:  # one list, several readers: a count must fit each of them
            self.by_hand.extend(Finding(job.id, (
                f"{t.reason}. {shared_list(others)}: change it by hand")) for t in trims)
        elif trims:
            # The caller's shards run side by side: its wall clock is its longest shard, of any configuration
            # the list names (one-shard ones too; not its called workflow's other jobs).
            listed = passed_shards(self.workflow, job, least=1)
            shards = [[(values, j) for values, j in run if listed and any(g.holds(values) for g in listed.groups)]
                      for run in named]
            before = percentile([max((j.test_seconds for _, j in run), default=0.0) for run in shards], 90)
            rest = percentile([max((j.test_seconds for values, j in run if not any(g.holds(values) for g, _ in trimmed)),
                                   default=0.0) for run in shards], 90)
            self.lists.append(ListReshard(job.id, passed.job, passed.key, tuple(trims),
                                          provisional=min(runs_read) < self.config.min_samples, wall_before_s=before,
                                          wall_after_s=max(rest, *(longest for _, longest in trimmed)),
                                          labels=stats.labels))

    def _fit(self, job: JobDef, full_runs: list[tuple[JobTiming, ...]], key: str, values: list[Any], step: StepDef,
             step_minutes: float | None, job_minutes: float, runs_in: JobDef,
             weights: dict[str, float] | None = None, others: Sequence[tuple[JobTiming, ...]] = ()) -> Fit:
        """What the runs of a matrix that ran all its shards (`full_runs`, each in the order of `values`) say of any
        count: the time its tests have (`tests_limit`), and the longest shard on k shards, per run from its per-file
        logs when they tell the whole suite, else from its shard times (that run's split, scaled). Files whose logs
        print no estimate (aiter's) are weighed as a split over measured times weighs them: by their median time
        over the runs (`weights`, else `pooled` over these). `others`: its runs that did not run every shard, whose
        hangs past the limit are taken at their usual time too (in `Fit.past` after these runs: no overrun of theirs)."""
        # whose the limit is when not the step's: the job's timeout, less what its shards spend on other steps
        rest = rest_p90(full_runs, step.name)
        limit_minutes, note = tests_limit(step_minutes, job_minutes, rest, runs_in.id)
        raising = f"job `{runs_in.id}`'s `timeout-minutes`" if note else f"`{step.name}`'s `timeout-minutes`"
        n = len(values)
        limit = self.config.reshard_safety * limit_minutes * 60
        from_logs: list[bool] = []  # per run: whether its per-file logs are read
        predictors: list[Callable[[int], float]] = []
        # (whole or None, its shards' own logs, whether some of its logs were another shard's)
        read = [self._run_log(job, shards, key, values, step) for shards in full_runs]
        # Each file's ends and kills, per runner (a shard's labels: SGLang's matrices run on mi300 or mi35x under one
        # job id, and a file's time on one is not its time on the other), in every run's logs that are their shards'
        # own, whole or not. A file killed in more of them than ended hangs: no count is said while it does. One
        # killed at a cap past the limit, which at least as many ended, hung there: no count keeps such a hang within
        # the limit, and its cap says nothing of how many shards the suite needs, so it is taken at its usual time
        # there (its shard's time less the rest of its cap: `excess`), and said (`past`). (A kill within the limit
        # keeps its cap: that run's shard times stand in, the hang a count can hold.)
        ended: dict[tuple[str, str], list[float]] = {}
        killed: Counter[tuple[str, str]] = Counter()
        # (the runs of some of its shards: their own logs, unchecked, for what ended and what was killed)
        partial = [[(j, log) for j in shards if (log := self.logs.get(j.api_id)) is not None
                    and not (log.empty and log.shard is None)] for shards in others]
        every = [placed for _, placed, _ in read] + partial
        for placed in every if any(log.killed or log.retry_kills for placed in every for _, log in placed) else ():
            for j, log in placed:  # (for kills only; a kill a retry followed is one, and the attempt that ended it an end)
                runner = runner_key(j.labels)
                for name, seconds in log.measured.items():
                    if name not in log.killed:
                        ended.setdefault((runner, name), []).append(seconds)
                killed.update((runner, name) for name in {*log.killed, *log.retry_kills})
        fit = Fit([], n, limit, limit_minutes, note, raising, rest, from_logs,
                  {item: median(seconds) for item, seconds in ended.items()},
                  {item for item, runs in killed.items() if runs > len(ended.get(item, ()))})
        for index, (shards, (merged, placed, misplaced)) in enumerate(zip(full_runs, read)):
            taken: dict[str, tuple[float, float, str]] = {}
            retried = False  # (a retry ran a file that hangs to its end here: said where the run is read file by file)
            for j, log in placed:
                taken.update(fit.take(index, j, log))
                retried = self._retry_kills(job.id, j, log, fit, step.name)[1] or retried
            times = [(j.step_seconds(step.name) or j.test_seconds) - fit.excess.get(j.api_id, 0.0) for j in shards]
            if merged is not None and merged.killed:  # (read file by file only when each kill is a hang past the limit)
                merged = replace(merged, measured={**merged.measured, **{name: usual for name, (_, usual, _) in taken.items()}},
                                 killed={}) if set(merged.killed) <= set(taken) else None
            if merged is None and not misplaced and any(log.killed for _, log in placed):  # ("Could not measure";
                # a run with another shard's log has it said so)
                self.kill_fallbacks.setdefault(job.id, set()).add(self._run_of.get(shards[0].api_id, -1 - index))
                if len(placed) < len(shards) and not any(log.unfinished for _, log in placed) and \
                        all(name in taken for _, log in placed for name in log.killed):  # (only a log is missing)
                    self.partial_logs.setdefault(job.id, []).append(f"{len(placed)} of {len(shards)}")
            from_logs.append(merged is not None)
            if merged is not None and retried:
                self.kill_retried.setdefault(job.id, set()).add(self._run_of.get(shards[0].api_id, -1 - index))
            if merged is not None:
                if merged.weighed:
                    weights = self.pooled(full_runs) if weights is None else weights
                    merged = replace(merged, estimates={**merged.estimates, **{
                        name: weights[name] for name in merged.weighed if name in weights}})
                merged = self._with_extra_runs(merged, shards, step)
                longest = ShardPredictor(merged, sum(times)).longest
                # Today's count, or fewer, takes at least what its longest shard was measured to take (a
                # file that ran in another shard than the estimates put it, a slow shard's start)
                predictors.append(lambda k, longest=longest, today=max(times):
                                  max(_or_inf(longest(k)), today) if k <= n else _or_inf(longest(k)))
            else:
                total = sum(times)
                imbalance = max(times) / (total / n) if total else 1.0
                predictors.append(lambda k, total=total, imbalance=imbalance: total if k == 1 else total / k * imbalance)
        fit.predictors = predictors
        for index, placed in enumerate(partial, start=len(full_runs)):  # (no count of theirs: their kills said, each)
            for j, log in placed:
                if log.killed:
                    self._cut_off(job.id, [(j, replace(log, unfinished=()))], step.name)
                if self._retry_kills(job.id, j, log, fit, step.name)[0] or log.killed:
                    self.kill_partials.setdefault(job.id, set()).add(self._run_of.get(j.api_id, -1 - index))
                fit.take(index, j, log)
        return fit

    def _retry_kills(self, job_id: str, shard: JobTiming, log: ShardLog, fit: Fit, step_name: str) -> tuple[bool, bool]:
        """Kills a retry followed, of files whose last attempt was no kill, named with the runner's kills (`_cut_off`)
        where they are a hang: past the limit (taken at the file's usual time: `Fit.beyond`), or where the file hangs
        on the shard's runner. (One within the limit that its retry ran to its end is no hang: the run is read with
        the retry's time.) Whether there were such, and whether a retry ran one that hangs to its end."""
        if not log.retry_kills:
            return False, False
        runner = runner_key(shard.labels)
        beyond = fit.beyond(shard, log)
        caps = {name: cap for name, (cap, _) in log.retry_kills.items()
                if name not in log.killed and (name in beyond or (runner, name) in fit.hanging)}
        if caps:
            self._cut_off(job_id, [(shard, replace(log, unfinished=(), killed=caps))], step_name)
        return bool(caps), any(name not in beyond and name in log.measured and name not in log.unfinished
                               for name in caps)

    def pooled(self, runs: Iterable[tuple[JobTiming, ...]]) -> dict[str, float]:
        """The median time of each file whose log prints no estimate over the shards' logs of `runs`: the weight a
        split over measured times gives it (ROCm/aiter's `update_split_test_times.py` writes the median of recent
        runs, every runner's logs together, and `split_tests.sh` splits by those); a killed file's cap is no time."""
        times: dict[str, list[float]] = {}
        for shards in runs:
            for j in shards:
                log = self.logs.get(j.api_id)
                for name in log.weighed if log is not None else ():
                    if name not in log.killed:  # type: ignore[union-attr]
                        times.setdefault(name, []).append(log.measured[name])  # type: ignore[union-attr]
        return {name: median(seconds) for name, seconds in times.items()}

    def _with_extra_runs(self, merged: ShardLog, shards: tuple[JobTiming, ...], step: StepDef) -> ShardLog:
        """A run's files with the untimed runs aiter's runner makes of one after its loop (`=== extra: test_mla.py
        ...`) added to that file: the time its shard's step spent beyond its files' lines goes where the file goes,
        not over every file of the suite."""
        added: dict[str, float] = {}
        for j in shards:
            log = self.logs.get(j.api_id)
            if log is None or not log.extra:
                continue
            named = [name for name in log.measured if name.rsplit("/", 1)[-1] in log.extra]
            if len(named) == 1:  # (the one file they run again; else it stays shared out)
                left = (j.step_seconds(step.name) or j.test_seconds) - sum(log.measured.values())
                added[named[0]] = added.get(named[0], 0.0) + max(0.0, left)
        if not added:
            return merged
        return replace(merged, measured={name: seconds + added.get(name, 0.0) for name, seconds in merged.measured.items()})

    def _left_measured(self, job: JobDef, reason: str, measured: tuple[bool, str] | None) -> None:
        """A matrix whose count foldbot does not change: why (`reason`, among the findings), and what its times say
        (`measured`: `_shared_count`'s), among the shard lists left by hand; or, when its shards already run into a
        timeout, that first, among the overruns."""
        if measured is not None and measured[0]:
            self.findings.append(Finding(job.id, f"{measured[1]}; {reason}"))
            self.overruns.append(job.id)
            return
        self.findings.append(Finding(job.id, reason))
        if measured is not None:
            self.by_hand.append(Finding(job.id, measured[1]))

    def _over_runners(self, job: JobDef) -> tuple[bool, str] | None:
        """Of a matrix of the same shards on several runners (`shards_over`), what the times say (`_shared_count`),
        with where its count is written besides its entries; None for another matrix."""
        over = shards_over(job)
        if over is None:
            return None
        key, _, values, _ = over
        n = len(values)
        places = [("", "its `include` entries", []), *_count_writers(self.workflow, job, n),
                  *_count_loops(self.workflow, [job.id], n)]
        return self._shared_count([(job, key)], values, places).get(job.id)

    def _expressed_count(self, job: JobDef) -> tuple[bool, str] | None:
        """Of a matrix of one axis another job's output gives, whose count that job's step writes (ROCm/aiter's
        triton shards: `split_tests.sh --shards 8`), what the times say (`_shared_count`), with every other GPU job
        whose matrix that step's count gives (aiter's `triton` and `triton-mi300x`: one split, one count, said once,
        with the first); None otherwise."""
        found = self._expressed(job)
        if found is None:
            return None
        (writer, _, (step, flag)), _ = found
        n = int(re.findall(r"\d+", flag)[-1])
        if n < 2:
            return None
        if (writer, step) not in self._shared:
            readers = [(other, seen[1]) for other in self.workflow.jobs.values()
                       if (seen := self._expressed(other)) is not None and (seen[0][0], seen[0][2][0]) == (writer, step)
                       and self._is_gpu(other)]
            places = [(writer, step, [flag]), *_count_loops(self.workflow, [r.id for r, _ in readers], n)]
            # a GPU job that runs the same lists in a matrix foldbot does not read shard by shard (`include:
            # ${{ fromJSON(<the same output>) }}`, the shards beside another axis): no count is said (overruns still are)
            outputs = {seen[0][1] for r, _ in readers if (seen := self._expressed(r)) is not None}
            read = {(writer, output) for output in outputs}
            opaque = [other.id for other in self.workflow.jobs.values()  # (its strategy reads one beside others too)
                      if other.matrix_expression and writer in other.needs and self._is_gpu(other)
                      and all(other is not r for r, _ in readers) and _outputs_read(other, self.workflow) & read]
            said = self._shared_count(readers, list(range(n)), places, named=False)
            if opaque:
                said = {readers[0][0].id: (False, (
                    f"{spoken_list([f'`{j}`' for j in opaque])} also {'runs' if len(opaque) == 1 else 'run'} the lists of "
                    f"this split, with a matrix from `{writer}`'s output that foldbot does not read shard by shard "
                    "(`include` objects, more axes than the shards'): nothing is said of fewer")),
                    **{j: v for j, v in said.items() if v[0]}}
            self._shared[writer, step] = said
        return self._shared[writer, step].get(job.id)

    def _expressed(self, job: JobDef) -> tuple[tuple[str, str, tuple[str, str]], str] | None:
        """Of a matrix of one axis another job's output gives, whose count one step of that job writes: (the writer,
        its output, (that step, its count flag)), and the axis."""
        found = _output_writer(job, self.workflow) if job.matrix_expression else None
        axes = list(job.matrix) if isinstance(job.matrix, dict) else []
        if found is None or len(found[2]) != 1 or len(axes) != 1 or isinstance(job.matrix[axes[0]], list) or \
                axes[0] in ("include", "exclude"):  # (`include: ${{ fromJSON(...) }}`: objects, no one axis of shards)
            return None
        return (found[0], found[1], found[2][0]), axes[0]

    def _shared_count(self, jobs: list[tuple[JobDef, str]], values: list[int], places: list[tuple[str, str, list[str]]],
                      named: bool = True) -> dict[str, tuple[bool, str]]:
        """What the measured times say of one count of shards that `jobs` run (each with its matrix's shard key), each
        on every value of its matrix's other keys (aiter's runners), a count foldbot does not change (written in the
        job that splits the suite, `split_tests.sh --shards 8`, and in `include` entries): (False, "the times allow K
        shards ...: change by hand <places>"), or why today's are all needed, said once, for the first job; (True,
        "already overruns: ...") for a job whose shards ran into a timeout. Each group of shards (a job's, on one
        runner) is weighed on its runs of all its shards against its own limit, and the count must hold on the one
        that needs most; a group with no such run stops the advice. {} when the runs do not tell (no group with a run
        of all its shards, a timeout known only when a run starts). `named`: whether the over-time line names the
        places (not where the finding beside it does)."""
        n, ids = len(values), [str(v) for v in values]
        several = len(jobs) > 1
        limits: dict[str, tuple[StepDef, float | None, float]] = {}  # job -> its test step, its and the job's timeout
        groups: dict[str, tuple[JobDef, list[tuple[JobTiming, ...]]]] = {}  # label -> its job, its runs of every shard
        order: dict[str, list[tuple[int, tuple[JobTiming, ...]]]] = {}  # job -> (run, its group's shards), per group
        present: dict[tuple[int, str], int] = {}  # (run, group) -> how many shards of it ran
        partial: dict[str, list[tuple[JobTiming, ...]]] = {}  # label -> its runs of some of its shards
        expected: list[str] = []

        def label(job: JobDef, by: str | None, kind: str) -> str:
            return " ".join(filter(None, [f"`{job.id}`" if several else "", f"`{by}: {kind}`" if by else ""]))

        for job, key in jobs:
            stats = self.stats.get(job.id)
            pattern = re.compile(rf"\bmatrix\.{re.escape(key)}\b")
            tests = [s for s in job.steps if s.run and self.config.step_category(s) == "test"]
            used = [s for s in tests if pattern.search(f"{s.run} {s.env}")]
            if len(used or tests) != 1:
                return {}
            (step,) = used or tests
            step_minutes, job_minutes, unknown = read_limits(step.timeout_minutes, job.timeout_minutes,
                                                             stats.labels if stats else ())
            if unknown:
                return {}
            assert job_minutes is not None
            limits[job.id] = step, step_minutes, job_minutes
            if stats is None:  # (a job of the split that ran no tests in these runs: a group with no run)
                expected.append(label(job, None, ""))
                continue
            by, kinds = _group_key(job, key, stats)
            expected += [label(job, by, kind) for kind in kinds]
            for index, shards in enumerate(stats.per_run):  # (oldest first)
                split: dict[str, list[JobTiming]] = {}
                for j in shards:
                    split.setdefault((_matrix_value(job, j, by) or "") if by else "", []).append(j)
                run = self._run_of.get(shards[0].api_id, index) if shards else index  # (the run, in every job's stats)
                for kind, members in split.items():
                    by_id = {_matrix_value(job, j, key): j for j in members}
                    if kind in kinds:
                        present[run, label(job, by, kind)] = len(members)
                    if len(members) == n and sorted(by_id, key=str) == sorted(ids) and kind in kinds:
                        runs = groups.setdefault(label(job, by, kind), (job, []))[1]
                        runs.append(tuple(by_id[i] for i in ids))
                        order.setdefault(job.id, []).append((run, runs[-1]))
                    elif kind in kinds:  # (a run of some of its shards: its hangs are no overrun either, `_fit`)
                        partial.setdefault(label(job, by, kind), []).append(tuple(members))
        if not groups:
            return {}
        key_of = dict((job.id, key) for job, key in jobs)
        weights = self.pooled(run for _, runs in groups.values() for run in runs)  # (one split for every group)
        fits = {name: self._fit(job, runs, key_of[job.id], list(values), *limits[job.id], job, weights,
                                others=partial.get(name, []))
                for name, (job, runs) in sorted(groups.items())}
        for job, _ in jobs:  # its logs are read for the runs of its groups (with every runner's, as a reshard's are)
            self.wanted[job.id] = [run for _, run in sorted(order.get(job.id, []), key=lambda item: item[0])]
        # Each group's kills, from its own runs' logs (`_hangs`): a hang there says no count; a test that hung past the
        # limit in a run is taken at its usual time there, said beside the count, of whichever group (`_taken`)
        hung = {name: self._hangs(groups[name][0].id, groups[name][1] + partial.get(name, []), fit)
                for name, fit in fits.items()}
        taken, files, _ = self._taken([(groups[name][0].id, groups[name][1] + partial.get(name, []), fit)
                                    for name, fit in fits.items()], (c.file for cs in hung.values() for c in cs))
        where = _places(places)
        one = f" (one count for {spoken_list([f'`{job.id}`' for job, _ in jobs])}: the lists of one split)" if several else ""
        said: dict[str, tuple[bool, str]] = {}
        for job, _ in jobs:  # a job whose shards ran into a timeout: their times are short of what they take
            own = [name for name in fits if groups[name][0] is job]
            if not own:
                continue
            fit = min((fits[name] for name in own), key=lambda f: f.limit)
            alone = self._too_long_alone(job.id, fit.limit)
            mine = list({c.file: c for name in own for c in hung[name]}.values())
            step, step_minutes, job_minutes = limits[job.id]
            mine_fits = [fits[name] for name in own]  # (a shard's time beyond its usual on hangs: its group's `excess`)
            if overrun := self._overrun(job.id, step, self.stats[job.id], step_minutes, job_minutes,
                                        more_shards=not alone and not mine,
                                        excess=lambda j, fits=mine_fits: sum(f.excess.get(j.api_id, 0.0) for f in fits)):
                self.candidates[job.id] = sum(fits[name].log_runs for name in own)
                said[job.id] = (True, overrun + (f"; {_no_count_fits(alone, mine, fit.raising, fit.limit)}"
                                                 if alone or mine else "")
                                + (f"; {taken}" if taken else "")
                                + (f"; its count is written in {where}{one}" if named else one))
        if said:  # (a job of the split already over time: no fewer shards for any)
            over = spoken_list([f"`{j}`" for j in said])
            return {**{job.id: (False, f"{over} {'runs' if len(said) == 1 else 'run'} the lists of the same split and "
                                       f"already {'overruns' if len(said) == 1 else 'overrun'} a timeout: no fewer "
                                       "shards") for job, _ in jobs}, **said}
        first = jobs[0][0].id
        missing = [name for name in expected if name not in fits]
        if missing:  # (no count is said: its logs are fetched, for the runs to come, but no line asks for them)
            whose = one or ", which runs the lists of the same split"
            return {first: (False, f"no run in the history ran all {n} shards on {spoken_list(missing)}{whose}, so nothing is "
                                   "said of fewer: the count must fit the slowest")}
        for job, _ in jobs:
            self.candidates[job.id] = sum(fit.log_runs for name, fit in fits.items() if groups[name][0] is job)

        def needs(item: tuple[str, Fit]) -> tuple[float, float]:  # the count a group needs, against its own limit
            name, fit = item
            if hung[name]:  # (a hang: no count is said, whatever another group needs)
                return math.inf, math.inf
            k = fit.best or (n if fit.p90_at(n) <= fit.limit else (fit.needed() or 3 * n + 1))
            return k, fit.p90_at(min(k, 3 * n)) / fit.limit if fit.limit else math.inf

        name, fit = max(fits.items(), key=needs)
        step = limits[groups[name][0].id][0]
        on = f" on {name}" if name else ""
        whose = fit.note or f"`{step.name}`'s {fit.limit_minutes:.0f}-min timeout"
        thin, few = min(((other, len(f.predictors)) for other, f in fits.items()), key=lambda item: item[1])
        bound = (f"{fit.limit / 60:.0f} min, {self.config.reshard_safety:.0%} of {whose}; {fit.estimate}"
                 + (f", provisional: {_runs(few)}{f' on {thin}' if thin else ''}, fewer than `min_samples` "
                    f"({self.config.min_samples})" if few < self.config.min_samples else ""))
        if hung[name]:  # (within the limit or not; what the other groups need, said beside it: review125 f02)
            others = [item for item in fits.items() if not hung[item[0]]]
            said_of, of = max(others, key=needs) if others else (name, fit)
            line = (f"today's {n} shards run {of.p90_at(n) / 60:.0f} min at p90{f' on {said_of}' if said_of else ''} "
                    f"({'within' if of.p90_at(n) <= of.limit else 'over'} {of.limit / 60:.0f} min); "
                    + _no_count_fits([], hung[name], fit.raising, fit.limit) + (f" (on {name})" if name and others else ""))
        elif fit.best is not None:
            setup = median(j.setup_seconds for _, runs in groups.values() for run in runs for j in run)
            # each group that ran more shards in a run than the count would run fewer (none where its `if:` skipped it)
            runs_read = {run for run, _ in present}
            fewer = sum(max(0, ran - fit.best) for ran in present.values()) / len(runs_read)
            line = (f"the times allow {fit.best} shards of its {n} (the longest {fit.p90_at(fit.best) / 60:.0f} min at "
                    f"p90{on}, within {bound}), {fewer:.3g} setups fewer a run (over the {_runs(len(runs_read))} it ran "
                    f"in; {setup / 60:.0f} min each, median): change by hand {where}{one}")
        elif fit.p90_at(n) <= fit.limit:
            line = (f"the times need all {n} shards ({n - 1} would run {fit.p90_at(n - 1) / 60:.0f} min at p90{on}, "
                    f"over {bound}){one}")
        else:
            needed = fit.needed()
            line = (f"today's {n} shards already run {fit.p90_at(n) / 60:.0f} min at p90{on}, over {bound}; "
                    + (f"about {needed} would keep the longest within it: change by hand {where}{one}" if needed else
                       f"no count up to {3 * n} keeps the longest within it: a test file may take longer alone{one}"))
        if taken:
            line = f"{taken}. {with_usual(files)}{line}"
        return {first: (False, line)}

    def _hangs(self, job_id: str, runs: list[tuple[JobTiming, ...]], fit: Fit) -> list[CutOff]:
        """The files that hang in these runs of a matrix (`fit`'s, then its `others`), on the runner where they do
        (killed in more runs than ended there), each counted in its runs there: no count is said while they do."""
        killed = [{file for j in run if (log := self.logs.get(j.api_id)) is not None
                   for file in {*log.killed, *log.retry_kills} if (runner_key(j.labels), file) in fit.hanging}
                  for run in runs]
        times = Counter(file for files in killed for file in files)
        return [replace(c, runs=times[c.file]) for c in self._killed(job_id) if c.file in times]

    def _taken(self, fits: list[tuple[str, list[tuple[JobTiming, ...]], Fit]],
               hung: Iterable[str]) -> tuple[str, int, int]:
        """What to say of the files `_fit` took at their usual time where they hung past the limit, over the fits of
        one count (each with its job and runs: aiter's runners), but those that hang somewhere (`hung`: the hang
        alone is said): `hung_past`'s sentence, how many files it names, in how many runs. Those runs are noted for
        "Could not measure" (`hang_runs`)."""
        hung = set(hung)
        taken: dict[str, list[tuple[float, float, str]]] = {}
        runs_of: dict[str, set[Any]] = {}  # file -> the runs it was taken in
        by: dict[str, str] = {}
        for job_id, its_runs, fit in fits:
            by.update((c.file, c.by) for c in self._killed(job_id))
            for index, files in fit.past.items():
                run = self._run_of.get(its_runs[index][0].api_id, (job_id, index))
                for name, seen in files.items():
                    if name not in hung:
                        taken.setdefault(name, []).append(seen)
                        runs_of.setdefault(name, set()).add(run)
                        self.hang_runs.setdefault(job_id, set()).add(run)
        runs = set().union(*runs_of.values()) if runs_of else set()
        items = []
        for name, seen in taken.items():
            usual = {runner: _took(u) for _, u, runner in seen}  # (its usual time on each runner it hung on)
            where = next(iter(usual.values())) if len(set(usual.values())) == 1 and len(fits) == 1 else \
                ", ".join(f"{took} on `{runner}`" for runner, took in sorted(usual.items()))
            items.append(f"`{name}`, killed at {cap(by.get(name, CutOff.by))} after {max(at for at, _, _ in seen) / 60:.0f} "
                         f"min{f' in {_runs(len(runs_of[name]))}' if len(taken) > 1 else ''}, {where} where it ended")
        return (hung_past(items, len(runs)), len(taken), len(runs)) if items else ("", 0, 0)

    def _run_log(self, job: JobDef, shards: tuple[JobTiming, ...], key: str, values: list[Any],
                 step: StepDef) -> tuple[ShardLog | None, list[tuple[JobTiming, ShardLog]], bool]:
        """The per-file times of one run of a matrix, when its logs tell the whole suite:
        every shard's log read (each lists only its own files), or one that lists the
        suite's plan; no shard cut off mid-file; and each log its own shard's, as far as its
        header (`partition: 2/14 (0-based id=1)`) says. None otherwise (shard times then).
        Beside it, its shards' logs when they are their own, whole or not (what ended and what the
        runner killed where: `_fit`); a run with a kill is read file by file only when `_fit` says so; and
        whether some of its logs were another shard's (`misplaced_logs` says so)."""
        # (a log that holds nothing foldbot reads, not even its shard's header, is no shard's times:
        # the run's files would be short by that shard's; "Could not measure" names it)
        logs = [(j, log) for j in shards if (log := self.logs.get(j.api_id)) is not None
                and not (log.empty and log.shard is None)]
        if not logs:
            return None, [], False
        misplaced, wrong = _misplaced(logs, len(shards), key, values, _suite_of(step),
                                      lambda j: _matrix_value(job, j, key))
        if misplaced:  # (one shard's files twice, another's not at all: every time of the run would be wrong)
            self.misplaced_logs.setdefault(job.id, []).extend(misplaced)
            own = [(j, log) for j, log in logs if j.api_id not in wrong]  # (what they ended, and killed, is theirs)
            if any(log.unfinished or log.killed for _, log in own):
                self._cut_off(job.id, own, step.name)
            return None, own, True
        merged = merge_logs([log for _, log in logs])
        if merged.unfinished or merged.killed:  # (a killed file's `elapsed` is the runner's cap, not its time)
            self._cut_off(job.id, logs, step.name)
            whole = not merged.unfinished and merged.usable and (merged.scope == "suite" or len(logs) == len(shards))
            return (merged if whole else None), logs, False
        if not merged.usable:
            return None, logs, False
        if merged.scope == "shard" and len(logs) < len(shards):
            self.partial_logs.setdefault(job.id, []).append(f"{len(logs)} of {len(shards)}")
            return None, logs, False
        return merged, logs, False

    def _cut_off(self, job_id: str, logs: list[tuple[JobTiming, ShardLog]], step_name: str) -> None:
        """Each file a log of this run began and never ended, and each the runner killed at its cap
        (`--timeout-per-file`, aiter's `timeout 60m`), with how long it ran at least; counted once a run (the logs
        of its shards on several runners are one run)."""
        known = self.cut_off.setdefault(job_id, {})
        for shard, log in logs:
            # (what the shard spent beyond its files' times: the one file it cut off, and the attempts its runner
            # killed before a retry, in no file's time)
            spent = (shard.step_seconds(step_name) or shard.test_seconds) - sum(s for _, s in log.retry_kills.values())
            stopped = [(name, False, max(0.0, spent - sum(log.measured.values())) if len(log.unfinished) == 1 else None)
                       for name in log.unfinished]
            for name, killed, at_least in stopped + [(name, True, cap) for name, cap in log.killed.items()]:
                was = known.get((name, killed))
                if was is not None and was.at_least_s is not None:
                    at_least = max(at_least, was.at_least_s) if at_least is not None else was.at_least_s
                estimate = None if name in log.weighed else log.estimates.get(name)  # (aiter's: its own time, no estimate)
                seen = self._cut_runs.setdefault((job_id, name, killed), set())
                seen.add(self._run_of.get(shard.api_id, shard.api_id))
                known[name, killed] = CutOff(name, len(seen), at_least, estimate, killed,
                                             log.killed_by if killed else CutOff.by)

    def _too_long_alone(self, job_id: str, limit: float) -> list[CutOff]:
        """The files cut off at the timeout that ran longer than `limit` alone: no count fits them."""
        return [c for c in self.cut_off.get(job_id, {}).values()
                if not c.killed and c.at_least_s is not None and c.at_least_s > limit]

    def _killed(self, job_id: str) -> list[CutOff]:
        """The files the runner killed at its cap (`--timeout-per-file`, aiter's `timeout 60m`): no count is said
        while they hang."""
        return [c for c in self.cut_off.get(job_id, {}).values() if c.killed]

    def _overrun(self, job_id: str, step: StepDef, stats: JobStats, step_minutes: float | None, job_minutes: float,
                 more_shards: bool = True, excess: Callable[[JobTiming], float] | None = None) -> str | None:
        """Whether shards of this matrix already ran into a timeout: their test step's, or their job's (`job_id`'s:
        each shard's own setup and steps against it; a shard it stopped was cut short there). `more_shards`: whether
        more shards could help, which a file too long alone rules out; `excess`: per shard, the seconds a test that
        hung past the limit spent beyond its usual time (`Fit.excess`), which no count helps (said apart)."""
        def ran_into(j: JobTiming) -> tuple[float, bool] | None:
            beyond = excess(j) if excess else 0.0
            spent = (j.step_seconds(step.name) or j.test_seconds) - beyond  # (as the predictions read it)
            if step_minutes is not None and spent >= step_minutes * 60 - 60:
                return spent, False
            whole = j.setup_seconds + j.test_seconds + j.other_seconds - beyond
            return (whole, True) if whole >= job_minutes * 60 - 60 else None

        hits = [[hit for j in shards if (hit := ran_into(j))] for shards in stats.per_run]
        said = []
        for by_job in (False, True):
            runs = [max(seconds for seconds, kind in run if kind is by_job) for run in hits if any(k is by_job for _, k in run)]
            if runs:
                what = (f"{job_minutes:.0f}-min timeout of job `{job_id}` (its setup and steps, longest "
                        f"{max(runs) / 60:.0f} min)" if by_job else
                        f"{step_minutes:.0f}-min timeout of `{step.name}` (longest {max(runs) / 60:.0f} min)")
                said.append(f"in {len(runs)} of {_runs(len(stats.per_run))} a shard ran into the {what}" if not said else
                            f"and in {len(runs)} the {what}")
        if not said:
            return None
        return (f"already overruns: {' '.join(said)}; "
                + ("it needs more shards or a longer timeout, not fewer" if more_shards else
                   "it needs a longer timeout, not fewer shards"))


def caps(killed: Iterable[CutOff]) -> str:
    """The caps that killed these files, for a sentence: the runner's `--timeout-per-file` (SGLang's), the test
    script's `timeout 60m` (aiter's)."""
    return " or ".join(cap(by) for by in dict.fromkeys(c.by for c in killed))


def cap(by: str) -> str:
    return f"the runner's `{by}`" if by == CutOff.by else f"the test script's `{by}`"


#: A GPU's name in a runner label (SGLang's `linux-mi300-gpu-1` and `linux-mi300-1gpu-sglang`, aiter's `linux-aiter-mi35x-1`)
_GPU_NAME = re.compile(r"(?i)(?<![a-z0-9])(?:mi\d{2,3}[a-z]?|gfx\d{2,4}[a-z0-9]?|navi\d+)(?![a-z0-9])")
#: The names one architecture goes by, as its LLVM target: a pool renamed from `mi300` to `gfx942` (pytorch's
#: `linux.rocm.gpu.mi300.2` and `linux.rocm.gpu.gfx942.2`), or from `mi35x` to `mi355x`, is the same GPU
_GPU_ARCH = ((re.compile(r"mi30\d[a-z]?|mi325[a-z]?|gfx94[0-9x]"), "gfx942"), (re.compile(r"mi35\d?[a-z]?|gfx95[0-9x]"), "gfx950"),
             (re.compile(r"mi2[015]0[a-z]?"), "gfx90a"), (re.compile(r"mi100"), "gfx908"))


def runner_key(labels: Iterable[str]) -> str:
    """The runner a shard ran on, as a file's times go: the GPU architectures its labels name (one pool under a label
    renamed, as SGLang's `linux-mi325-gpu-1` became `linux-mi325-1gpu-sglang`: `gfx942`), else its labels in any order
    and case (GitHub's labels are not case-sensitive)."""
    return _runner_key(tuple(labels))


@functools.lru_cache(maxsize=1024)
def _runner_key(labels: tuple[str, ...]) -> str:
    labels = tuple(sorted({label.lower() for label in labels}))
    gpus = {found.group(0).lower() for label in labels for found in _GPU_NAME.finditer(label)}
    archs = sorted({next((arch for names, arch in _GPU_ARCH if names.fullmatch(gpu)), gpu) for gpu in gpus})
    return "/".join(archs or labels)


def hung_past(files: list[str], runs: int) -> str:
    """Runs where tests hung past the limit (`files`: which, how long, their usual time; `_hangs`), for a sentence."""
    if len(files) == 1:
        return (f"in {_runs(runs)} a test hung past the limit alone ({files[0]}): no count keeps such a hang within it; "
                "fix the hung test")
    return (f"in {_runs(runs)} tests hung past the limit alone ({'; '.join(files)}): no count keeps such a hang within "
            "it; fix the hung tests")


def with_usual(files: int) -> str:
    """What a line after `hung_past` rests on."""
    return "With it at its usual time there, " if files == 1 else "With them at their usual times there, "


def _took(seconds: float) -> str:
    """A file's time, for a sentence: in minutes, or seconds when under a minute and a half."""
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _no_count_fits(files: list[CutOff], killed: list[CutOff], raising: str, limit: float) -> str:
    """Files that alone ran past the limit before they were cut off, and files the runner killed at its cap
    (`--timeout-per-file`, aiter's `timeout 60m`): what to do instead of a count (`raising`: the timeout that sets
    the limit)."""
    said = []
    if files:
        named = ", ".join(
            f"`{c.file}` ran {c.at_least_s / 60:.0f} min and had not ended when its step stopped "  # type: ignore[operator]
            f"(in {_runs(c.runs)}" + _estimated(c) + ")"
            for c in sorted(files, key=lambda c: -(c.at_least_s or 0))[:3])
        said.append(f"no shard count keeps the longest within {limit / 60:.0f} min, as one file alone runs longer: "
                     f"{named}; raise {raising} or split that file")
    if killed:
        named = ", ".join(
            f"`{c.file}` was killed at {cap(c.by)} after {c.at_least_s / 60:.0f} min "  # type: ignore[operator]
            f"(in {_runs(c.runs)}" + _estimated(c) + ")"
            for c in sorted(killed, key=lambda c: (-c.runs, -(c.at_least_s or 0)))[:3])
        said.append(f"no shard count is said while a test hangs: {named}, so how long it takes is not known; fix the "
                    f"hung test, or, if it needs longer, raise {caps(killed)} or split that file")
    return "; ".join(said)


def _count_writers(workflow: Workflow, job: JobDef, n: int) -> list[tuple[str, str, list[str]]]:
    """The steps of the jobs this one needs that hand a splitter its count of n shards (ROCm/aiter's
    `split_aiter_tests`: `split_tests.sh --shards 8`, whose lists the matrix's shards read): (job, step, [the flag
    as written])."""
    return [(need, step.name, [m.group(0)]) for need in job.needs if need in workflow.jobs
            for step in workflow.jobs[need].steps for m in _COUNT_FLAG.finditer(step.run or "")
            if int(re.findall(r"\d+", m.group(0))[-1]) == n]


def _places(places: list[tuple[str, str, list[str]]]) -> str:
    """Where a count is written, for a sentence: each step once, with every spelling in it (`split_triton_tests`'s
    `Split` (`--shards 8`, `seq 0 7`)); a place with no job is said as it is (its `include` entries)."""
    merged: dict[tuple[str, str], list[str]] = {}
    for job, step, found in places:
        merged.setdefault((job, step), []).extend(f for f in found if f not in merged.get((job, step), []))
    return spoken_list([f"`{job}`'s `{step}` ({', '.join(f'`{f}`' for f in found)})" if job else step
                    for (job, step), found in merged.items()])


def spoken_list(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1] if items else ""


def _group_key(job: JobDef, key: str, stats: JobStats) -> tuple[str | None, list[str]]:
    """The key whose values each run every shard of a matrix of `include` entries (aiter's `runner`; the first of
    the varying keys other than the shard key whose value every measured job's name tells), with its values in
    the entries; (None, [""]) for a matrix of shards alone."""
    entries = _include_entries(job)
    varying = [k for k in _varying(entries) if k != key]
    for by in varying:
        if all(_matrix_value(job, j, by) is not None for j in stats.shards):
            return by, sorted({_shown(e.get(by)) for e in entries})
    return (None, [""]) if not varying else (varying[0], sorted({_shown(e.get(varying[0])) for e in entries}))


def _count_loops(workflow: Workflow, job_ids: list[str], n: int) -> list[tuple[str, str, list[str]]]:
    """Every script loop over n shards in a job that runs before or after any of `job_ids` (`count_elsewhere`'s
    spellings): (job, step, [the loop as written])."""
    related = set().union(*(_needs_closure(workflow, j, after=True) | _needs_closure(workflow, j, after=False)
                            for j in job_ids)) - set(job_ids)
    return [(other.id, step.name, [found]) for other in (workflow.jobs[j] for j in sorted(related))
            for step in other.steps if (found := _loop_over(step.run or "", n))]


def count_elsewhere(workflow: Workflow, job_id: str, n: int) -> str | None:
    """Where a job that runs before or after the matrix (its `needs:`, either way, directly or through others)
    counts its n shards: a script's loop over them (`for shard in {0..7}`, `0 1 ... 7`, `$(seq 0 7)`, `seq -w 0 1 7`,
    `seq 0 $((8-1))`, `((i=0; i<8; i++))`, `range(8)`; ROCm/aiter's results job checks every shard's log so, and a
    split job may write a list per shard, whose last lists no shard would run after a trim). As "`job`'s `step`
    (`{0..7}`)", the first; None when none does. (A loop of n over something else, GPUs or retries, is taken
    for one too: the report says where, to change by hand.)"""
    # (not another job's matrix over as many shards: SGLang's stages, chained by `needs:`, are each a suite of
    # their own on `part: [0, 1]`)
    loops = _count_loops(workflow, [job_id], n)
    return _places(loops[:1]) if loops else None


def _loop_over(text: str, n: int) -> str | None:
    """A script's loop over n shards (`count_elsewhere`'s spellings), as written; None when it has none."""
    last = n - 1
    loop = re.compile(rf"\{{0\.\.{last}\}}|\{{1\.\.{n}\}}"
                      rf"|\bseq(?:\s+-\w+)*\s+(?:0\s+(?:1\s+)?{last}|1\s+(?:1\s+)?{n}|{n}(?!\s+\d))(?![\w.])"
                      rf"|\bseq(?:\s+-\w+)*\s+0\s+(?:1\s+)?\$\(\(\s*{n}\s*-\s*1\s*\)\)"
                      rf"|\brange\(\s*(?:0\s*,\s*)?{n}\s*\)|\brange\(\s*1\s*,\s*{n + 1}\s*\)"
                      rf"|\(\(\s*\w+\s*=\s*0\s*;\s*\w+\s*(?:<\s*{n}|<=\s*{last})\s*;"
                      rf"|\(\(\s*\w+\s*=\s*1\s*;\s*\w+\s*(?:<=\s*{n}|<\s*{n + 1})\s*;")
    listed = re.compile(r"\bfor\s+\w+\s+in((?:\s+\d+)+)\s*(?:;|\n|$)")
    counts = ([str(i) for i in range(n)], [str(i) for i in range(1, n + 1)])
    found = loop.search(text) or next((m for m in listed.finditer(text) if m.group(1).split() in counts), None)
    return " ".join(found.group(0).split()) if found else None


def _needs_closure(workflow: Workflow, job_id: str, after: bool) -> set[str]:
    """The jobs that run after `job_id` (`after`: they need it, or need one that does, ...), or before it."""
    out: set[str] = set()
    edge = [job_id]
    while edge:
        found = {other.id for other in workflow.jobs.values() if other.id not in out and other.id != job_id and
                 any(j in other.needs for j in edge)} if after else \
            {need for j in edge if j in workflow.jobs for need in workflow.jobs[j].needs
             if need in workflow.jobs and need not in out and need != job_id}
        out |= found
        edge = list(found)
    return out


def _estimated(cut: CutOff) -> str:
    """The runner's estimate of a file, for beside what it ran (a hung file's is far below its cap)."""
    return f"; the runner estimates it at {cut.estimate_s / 60:.0f} min" if cut.estimate_s else ""


def _suite_of(step: StepDef) -> str | None:
    """The suite a test command names (`--suite X`), when it names one as text."""
    found = re.search(r"--suite[ =]([\w.-]+)(?=\s|$)", step.run or "")
    return found.group(1) if found else None


def _misplaced(logs: list[tuple[JobTiming, ShardLog]], n: int, key: str, values: list[Any],
               suite: str | None = None,
               value_of: Callable[[JobTiming], str | None] | None = None) -> tuple[list[str], set[int]]:
    """The logs of one run's shards whose header says they are another shard's: of another suite
    than the command's `--suite` (another matrix's logs of as many shards), of a run on another
    count, the same shard's as another job's, or (when the matrix's values are the shard ids,
    `part: [0, 1, ...]`) not their job's value. A log with no header is taken as given. Beside what it says of
    them, the API ids of their jobs (both, when two have one shard's log)."""
    ids = [str(value) for value in values] == [str(i) for i in range(n)]
    out: list[str] = []
    wrong: set[int] = set()
    seen: dict[int, int] = {}
    for job, log in logs:
        if log.shard is None:
            continue
        said = len(out)
        index, count = log.shard
        value = value_of(job) if value_of else job.ref.value(key)
        header = f"`{log.header or f'{index + 1}/{count} (0-based id={index})'}`"
        if suite is not None and log.suite is not None and log.suite != suite:
            out.append(f"job {job.api_id}'s log is of the suite `{log.suite}` (its header), not `{suite}`")
        elif count != n:
            out.append(f"job {job.api_id}'s log is of a run on {count} shards (its header: {header}), not {n}")
        elif ids and value is not None and value != str(index):
            out.append(f"job {job.api_id} (`{key}: {value}`) has the log of shard {index} (its header: {header})")
        elif index in seen:
            out.append(f"jobs {seen[index]} and {job.api_id} have logs of one shard (their header: {header})")
            wrong.add(seen[index])
        if len(out) > said:
            wrong.add(job.api_id)
        else:  # (a log said to be another's is no claim on its shard: that shard's own job keeps its log)
            seen.setdefault(index, job.api_id)
    return out, wrong


def _some(job_ids: list[str], shown: int = 3) -> str:
    """Job ids for a sentence: the first `shown`, then how many more."""
    named = ", ".join(f"`{job_id}`" for job_id in job_ids[:shown])
    return named if len(job_ids) <= shown else f"{named} and {len(job_ids) - shown} more"


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def _fmt_timeouts(values: list[float | None]) -> str:
    """The moved steps' own timeouts, each once, with how many steps had it when more than one:
    `30 min`, `none (14 steps), 30 min`."""
    counts = Counter("none" if v is None else f"{v:.0f} min" for v in values)
    return ", ".join(shown if n == 1 else f"{shown} ({n} steps)" for shown, n in counts.items())
