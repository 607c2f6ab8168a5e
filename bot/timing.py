"""From API jobs and steps to setup / test / other seconds per job, and over runs.

Input is what GitHub's REST API returns: a workflow run and its jobs with steps.
Each API job is mapped to the workflow job that produced it (by its evaluated
`name:` template, its id prefix, or the caller of a reusable workflow) and to its
matrix values; each step is classified by ordered rules.

Pure: no clock, no network.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from .config import RepoConfig
from .workflow import _EXPR, JobDef, Workflow, expression_end, expression_parts, fills


class BundleError(ValueError):
    """A run bundle that cannot be used; the message says what is wrong."""


# --- job names → workflow jobs -----------------------------------------------------------------

@dataclass(frozen=True)
class JobRef:
    """Which workflow job an API job came from, and with which matrix values."""

    job_id: str | None
    matrix: tuple[tuple[str, str], ...] = ()
    #: When the name fits several workflow jobs equally (two jobs with one `name:`) and
    #: nothing else tells them apart: their ids (and `job_id` is None).
    ambiguous: tuple[str, ...] = ()

    def value(self, key: str) -> str | None:
        return dict(self.matrix).get(key)


def _split_args(text: str) -> list[str]:
    """Split a function's argument list at top-level commas."""
    args: list[str] = []
    current: list[str] = []
    depth, quote = 0, False
    for ch in text:
        if ch == "'":
            quote = not quote
        elif not quote and ch in "([":
            depth += 1
        elif not quote and ch in ")]":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            args.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if current or args:
        args.append("".join(current).strip())
    return args


_MATRIX_REF = re.compile(r"matrix\.([A-Za-z0-9_-]+)")
_FORMAT_CALL = re.compile(r"format\(\s*'((?:[^']|'')*)'\s*(?:,(.*))?\)", re.S)
_FORMAT_TOKEN = re.compile(r"\{\{|\}\}|\{([0-9]+)\}")  # escaped braces and `{N}` placeholders


def _expr_pattern(expr: str, seen: set[str]) -> str:
    """Regex for what one `${{ expr }}` may evaluate to. A matrix value is a named
    group; a second mention of the same key must be the same text (`seen` holds the
    groups made so far for this name)."""
    ref = _MATRIX_REF.fullmatch(expr.strip())
    if ref:
        group = _group(ref.group(1))
        if group in seen:
            return f"(?P={group})"
        seen.add(group)
        return f"(?P<{group}>.+?)"
    call = _FORMAT_CALL.fullmatch(expr.strip())
    if call:
        literal = call.group(1).replace("''", "'")
        args = _split_args(call.group(2) or "")
        out, pos = [], 0
        for token in _FORMAT_TOKEN.finditer(literal):  # literal text is escaped a run at a time
            out.append(re.escape(literal[pos : token.start()]))
            if token.group(1) is None:  # `{{` or `}}`
                out.append(re.escape(token.group(0)[0]))
            else:
                index = int(token.group(1))
                arg = args[index] if index < len(args) else ""
                out.append(_expr_pattern(arg, seen) if _MATRIX_REF.fullmatch(arg.strip()) else ".+?")
            pos = token.end()
        out.append(re.escape(literal[pos:]))
        return "".join(out)
    return ".+?"


def _group(key: str) -> str:
    """The regex group name of a matrix key: `m_`, then the key with every character
    but a letter or digit written `_xx_` (its code in hex), so `gpu-type` and
    `gpu_type` stay apart and `_key_of` reads the key back."""
    return "m_" + re.sub(r"[^A-Za-z0-9]", lambda m: f"_{ord(m.group()):02x}_", key)


def _key_of(group: str) -> str:
    return re.sub(r"_([0-9a-f]{2})_", lambda m: chr(int(m.group(1), 16)), group[2:])


def _template_pattern(template: str) -> str:
    out, pos = [], 0
    seen: set[str] = set()
    for match in _EXPR.finditer(template, 0, expression_end(template)):
        out.append(re.escape(template[pos : match.start()]))
        out.append(_expr_pattern(match.group(1), seen))
        pos = match.end()
    out.append(re.escape(template[pos:]))
    return "".join(out)


@dataclass(frozen=True)
class _NameRule:
    job_id: str
    name_template: str | None
    axes: tuple[str, ...]  # the matrix axes in order, as a default name lists their values
    widths: tuple[int | None, ...]  # how many of those values each axis takes (`_width`)
    full: re.Pattern[str]
    head: re.Pattern[str] | None  # the name without its parenthesised matrix part (skipped jobs)
    literal_prefix: int
    prefix: str  # what every name this rule matches starts with (a cheap test before the regexes)
    # of a `name:` with two expressions or more, its text around them (`full`'s, `head`'s): a name that does not hold
    # it in order is no match, told before the pattern is run (`_may_fit`): the pattern tries every split of a name
    # among its expressions (review150 c04: six of them against another job's 80-character name took 4 s)
    full_parts: tuple[str, ...] | None = None
    open_end: bool = False  # (`full` ends in `_VALUES_SUFFIX`: more text may follow its last part)
    head_parts: tuple[str, ...] | None = None

    def may_fit(self, pattern: re.Pattern[str], name: str) -> bool:
        """Whether `name` may match `pattern` (`full` or `head`), by the text around the expressions."""
        parts = self.full_parts if pattern is self.full else self.head_parts
        return parts is None or _may_fit(parts, name, self.open_end and pattern is self.full)


def _may_fit(parts: tuple[str, ...], name: str, open_end: bool) -> bool:
    """Whether `name` holds the text around a template's expressions, in order: it starts with the first part and
    ends with the last, or (`open_end`) holds it after the others."""
    if not open_end:
        return fills(parts, name)
    if not name.startswith(parts[0]):
        return False
    at = len(parts[0])
    for part in parts[1:]:
        at = name.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


def _parts_of(template: str) -> tuple[str, ...] | None:
    """The text around a template's expressions, where it has two or more (`_NameRule.full_parts`)."""
    parts = expression_parts(template)
    return parts if len(parts) > 2 else None


def _name_rule(job: JobDef) -> _NameRule:
    axes = job.matrix_axes
    return _compiled_name_rule(job.id, job.name_template, tuple(axes), bool(job.matrix),
                               tuple(_width(values) for values in axes.values()))


def _leaves(value: Any) -> int | None:
    """How many values GitHub lists in a default job name for one matrix value: an object's
    every leaf (FBGEMM's `host-machine: {arch: x86, instance: rocm}` is `x86, rocm`)."""
    if isinstance(value, dict):
        counts = [_leaves(v) for v in value.values()]
        return None if None in counts else sum(c for c in counts if c is not None)
    return None if isinstance(value, list) else 1


def _width(values: list[Any]) -> int | None:
    """The names' values one axis takes, when each of its values takes as many; None: not known."""
    widths = {_leaves(value) for value in values}
    return widths.pop() if len(widths) == 1 else None


#: The matrix values GitHub appends to a matrix job's name, `name (v1, v2)`, when the name
#: itself shows none of them (no `name:`, or one without a `${{ matrix.* }}` expression).
_VALUES_SUFFIX = r"(?: \((?P<__values>.*)\))?"


@functools.lru_cache(maxsize=4096)
def _compiled_name_rule(job_id: str, name_template: str | None, axes: tuple[str, ...],
                        matrix: bool, widths: tuple[int | None, ...] = ()) -> _NameRule:
    """The patterns for one job's API names: built once per (id, `name:`, axes, matrix), as
    `re` compiles a pattern once, since the server reads the same workflows again and again."""
    if name_template is None:
        pattern = re.escape(job_id) + _VALUES_SUFFIX
        return _NameRule(job_id, None, axes, widths, re.compile(pattern, re.S), None, len(job_id), job_id)
    template = name_template.strip()
    pattern = _template_pattern(template)
    if matrix and not any(_MATRIX_REF.search(e) for e in _EXPR.findall(template, 0, expression_end(template))):
        pattern += _VALUES_SUFFIX
    head = head_parts = None
    # `name (a, b)` with the parenthesised part built from expressions: a skipped
    # matrix job shows up without it.
    evaluated = template
    whole = re.fullmatch(r"\$\{\{\s*(format\(.*\))\s*\}\}", template, re.S)
    if whole:
        call = _FORMAT_CALL.fullmatch(whole.group(1))
        evaluated = call.group(1) if call else template
    cut = evaluated.rfind(" (")
    prefix = _literal_start(template)
    if cut > 0 and evaluated.rstrip().endswith(")"):
        head_template = evaluated[:cut]
        if whole and call:
            head_template = "${{ format('" + head_template + "'" + (", " + call.group(2) if call.group(2) else "") + ") }}"
        head = re.compile(_template_pattern(head_template), re.S)
        head_parts = _parts_of(head_template)
        prefix = os.path.commonprefix([prefix, _literal_start(head_template)])
    literal = re.match(r"[^$]*", evaluated)
    return _NameRule(job_id, name_template, axes, widths, re.compile(pattern, re.S), head,
                     len(literal.group(0)) if literal else 0, prefix, _parts_of(template),
                     pattern.endswith(_VALUES_SUFFIX), head_parts if head is not None else None)


def _literal_start(template: str) -> str:
    """The text every evaluation of a `name:` template starts with: up to its first
    expression, or for a whole `format()` call, up to its first placeholder or brace."""
    whole = re.fullmatch(r"\$\{\{\s*(format\(.*\))\s*\}\}", template, re.S)
    call = _FORMAT_CALL.fullmatch(whole.group(1)) if whole else None
    if call:
        return re.split(r"[{}]", call.group(1).replace("''", "'"), maxsplit=1)[0]
    return template.split("${{", 1)[0]


#: What a script step's kind and commands say (`StepDef.unspoken`, `StepDef.said`).
Said = tuple[str, str]
#: What a script that only looks says before the file's first test step (`RepoConfig.looks_at_the_machine`): setup,
#: where no step GitHub lists before it was a test either (review151 c04: `name: ${{ matrix.suite }}`, a test GitHub
#: shows as `Accuracy tests`, is none in the file; a `Clear cache` after it is other).
LOOK = "look"


class ScriptSteps(dict[str, Said]):
    """The `run:` steps of a workflow job whose name may not speak for their script: unnamed ones whose first line,
    which GitHub names them by, does not, and named ones no rule takes whose commands say what they do or only look
    (`LOOK` before the job's first test step): by that name, the kind (`StepDef.unspoken`) and what their commands
    say. And two ways GitHub's list of the job's steps
    is read further: `ordered`, a name several such steps are shown by whose commands say different
    things (`set -ex`, then an install; `set -ex`, then pytest), each one's in the job's order, which GitHub's list
    keeps (the runner lists every step when the job starts, and one that never runs as skipped), used where the
    list has as many steps of that name as the file; `shown`, a name with expressions (`export
    HIP_VISIBLE_DEVICES=${{ matrix.gpu }}`), which GitHub shows with their values, as the text around them (never
    a name another step of the job has as it is: `plain`)."""

    def __init__(self, plain: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.ordered: dict[str, tuple[Said, ...]] = {}
        self.shown: list[tuple[tuple[str, ...], str]] = []  # (the text around its expressions, the name as written)
        self.plain = plain  # the names of the job's steps that have no expression, as GitHub shows them
        # memo of `_written`, for every run read (review151 c07: per run, 4,000 unnamed `ls ${{ ... }}/dir<i>` steps
        # were matched against each other again in each run, 15.8 s a run)
        self.written: dict[str, str | None] = {}
        # `shown` by the text after its last expression, and that text's lengths: a name is tried only against those
        # it ends with (c07: 4,000 such steps, each tried against every one, took 15 s)
        self._by_end: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._ends: set[int] = set()

    def show(self, parts: tuple[str, ...], name: str) -> None:
        """A name with expressions (`shown`), by the text around them."""
        self.shown.append((parts, name))
        self._by_end.setdefault(parts[-1], []).append((parts, name))
        self._ends.add(len(parts[-1]))

    def _written(self, name: str) -> str | None:
        """The name as written of a step GitHub shows as `name`: itself, else the one with expressions whose text
        around them `name` fills, the most text of several (`cd ${{ github.workspace }}/third_party`, not `cd ${{
        github.workspace }}`); None when none does, or two fill it alike, or `name` is another step's own
        (`Run actions/checkout@v4` beside `Run ${{ matrix.suite }}`)."""
        if name in self:
            return name
        if name in self.plain:
            return None
        fits = sorted(((sum(map(len, parts)), written) for length in self._ends
                       for parts, written in self._by_end.get(name[len(name) - length:] if length else "", ())
                       if length <= len(name) and fills(parts, name)), reverse=True)
        return fits[0][1] if fits and (len(fits) == 1 or fits[0][0] > fits[1][0]) else None

    def reader(self, raw: Iterable[Any]) -> Callable[[str], Said | None]:
        """What a step of `raw` (a job's steps, as the API lists them) says, by its name, in the list's order."""
        if not self.ordered and not self.shown:
            return self.get
        written = self.written

        def name_of(name: str) -> str | None:
            if name not in written:
                written[name] = self._written(name)
            return written[name]
        counts: dict[str, int] = {}
        if self.ordered:
            for step in raw:
                if isinstance(step, Mapping) and (key := name_of(str(step.get("name") or ""))) in self.ordered:
                    counts[key] = counts.get(key, 0) + 1
        taken: dict[str, int] = {}

        def read(name: str) -> Said | None:
            key = name_of(name)
            if key is None:
                return None
            alike = self.ordered.get(key)
            if alike is not None and counts.get(key) == len(alike):
                taken[key] = index = taken.get(key, -1) + 1
                return alike[index]
            return self[key]
        return read


class ActionSteps(dict[str, "str | None"]):
    """The action steps of a workflow job by the name GitHub shows: its `uses:` where the step is named (None where
    steps of that name use others), and `each`: every such step's, in the job's order (review152 d02: two steps named
    `Results`, an upload and another action, were read by their own `uses:` in the file and alike in GitHub's list,
    so a fold moved an upload it counted as setup saved)."""

    def __init__(self) -> None:
        super().__init__()
        self.each: dict[str, list[str | None]] = {}
        self.alike = False  # whether steps of one name use others (set once they are all in)

    def reader(self, raw: Iterable[Any]) -> Callable[[str], str | None]:
        """The `uses:` of each step of GitHub's list by its name: the n-th of a name the file's n-th, where the list
        has as many of them as the file (it keeps the file's order); else that of the name."""
        if not self.alike:
            return self.get  # (no steps of one name use others: SGLang's jobs, every run)
        counts: dict[str, int] = {}
        for step in raw:
            if isinstance(step, Mapping) and (name := str(step.get("name") or "")) in self:
                counts[name] = counts.get(name, 0) + 1
        taken: dict[str, int] = {}

        def read(name: str) -> str | None:
            each = self.each.get(name, ())
            if self[name] is None and len(each) > 1 and counts.get(name) == len(each):
                taken[name] = at = taken.get(name, -1) + 1
                return each[at]
            return self[name]
        return read


class JobMatcher:
    """Maps API job names to workflow jobs and matrix values, for one workflow."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self._rules = [_name_rule(job) for job in workflow.jobs.values()]
        self.callers = frozenset(job_id for job_id, job in workflow.jobs.items() if job.uses)
        self._cache: dict[str, JobRef] = {}
        self._actions: dict[str | None, ActionSteps] = {}
        self._scripts: dict[str | None, ScriptSteps] = {}

    def action_steps(self, job_id: str | None) -> ActionSteps:
        """The names GitHub shows for the action (`uses:`) steps of a workflow job, each with its `uses:` where the
        step is named and no other action step of that name uses another (`RepoConfig.action_category`), else None."""
        names = self._actions.get(job_id)
        if names is None:
            job = self.workflow.jobs.get(job_id or "")
            names = self._actions[job_id] = ActionSteps()
            for step in job.steps if job else ():
                if step.uses is not None:
                    uses = step.uses if step.explicit_name is not None else None
                    names.each.setdefault(step.name, []).append(uses)
                    names[step.name] = uses if names.get(step.name, uses) == uses else None
            names.alike = any(uses is None and len(names.each[name]) > 1 for name, uses in names.items())
        return names

    def script_steps(self, job_id: str | None, config: RepoConfig) -> ScriptSteps:
        """The names GitHub shows for the `run:` steps of a workflow job whose name may not speak for their
        script (an unnamed one's first line that does not; a named one's commands that say what it does, where
        no rule of `config` takes its name), with their kind (`StepDef.unspoken`) and what their commands say
        (`StepDef.said`): `ScriptSteps`. A script that only looks (`RepoConfig.looks_at_the_machine`) says `LOOK`
        before the job's first test step (`Clear cache`, `rm -rf ~/.triton/cache`; `Run ROCm command`, `rocminfo`),
        setup where GitHub's list has no test step before it (`_steps`), and nothing after it (`ls results/`), nor in
        a job with no test step: other. (One config a matcher: an analysis's.)"""
        names = self._scripts.get(job_id)
        if names is None:
            job = self.workflow.jobs.get(job_id or "")
            steps = job.steps if job else ()
            alike: dict[str, list[Said]] = {}  # the name GitHub shows -> each such step's (kind, said), in order
            for step in steps:
                # (a name a rule takes is not read by its commands: SGLang's lanes' scripts cost 3.4 ms a file to read)
                if step.uses is None and (step.explicit_name is None or config.rule_for(step.name) is None):
                    kind, said = step.unspoken, step.said
                    if config.looks_at_the_machine(step):  # (helion's `Run ROCm command`: `rocminfo`, then the tests)
                        said = LOOK if step.index < config.test_span(step.siblings)[0] < len(step.siblings) else ""
                    alike.setdefault(step.name, []).append((kind, said))
            # (steps shown alike whose commands say other things: where the API's list cannot be read in the file's
            # order, their commands tell neither, and a first line that does not speak for one speaks for none)
            names = self._scripts[job_id] = ScriptSteps(frozenset(
                step.name for step in steps if "${{" not in step.name))
            for name, said_each in alike.items():
                seen = set(said_each)
                kinds, said = {kind for kind, _ in seen if kind}, {said for _, said in seen}
                if len(kinds) != 1:  # (none: every first line speaks for its script)
                    continue
                names[name] = (kinds.pop(), said.pop() if len(said) == 1 else "")
                if len(seen) > 1:
                    names.ordered[name] = tuple(said_each)
                parts = expression_parts(name)
                if len(parts) > 1 and "".join(parts).strip():  # (an expression in it, and text to find it by)
                    names.show(parts, name)
        return names

    def match(self, api_name: str) -> JobRef:
        if api_name not in self._cache:
            self._cache[api_name] = self._match(api_name)
        return self._cache[api_name]

    def match_job(self, api_name: str, steps: Iterable[str], labels: tuple[str, ...]) -> JobRef:
        """`match`, and for a name that several workflow jobs render alike, the one
        whose steps, runner labels or called workflow fit the API job (still
        ambiguous when none fits better than the others)."""
        ref = self.match(api_name)
        if not ref.ambiguous:
            return ref
        names = set(steps)
        # the called job's first word, at any level below the first (a caller's `name:` may have levels too)
        callees = {level.strip().split(" ", 1)[0].lower() for level in name_levels(api_name)[1:]} - {""}
        scores: dict[str, int] = {}
        for job_id in ref.ambiguous:
            job = self.workflow.jobs[job_id]
            score = len(names & {s.name for s in job.steps})
            if isinstance(job.runs_on, str) and "${{" not in job.runs_on and job.runs_on in labels:
                score += 1
            elif isinstance(job.runs_on, list) and job.runs_on and set(map(str, job.runs_on)) <= set(labels):
                score += 1
            if job.uses and callees & set(re.split(r"[^a-z0-9]+", job.uses.rsplit("/", 1)[-1].lower())):
                score += 1
            scores[job_id] = score
        top = max(scores.values())
        winners = [job_id for job_id, score in scores.items() if score == top]
        if top > 0 and len(winners) == 1:
            return self._match_one_of(api_name, winners[0])
        return ref

    def called_job(self, api_name: str, job_id: str) -> str:
        """`called_job` of a name of the job `job_id` (a caller of a reusable workflow), after
        as many of its levels as its own `name:` renders (`ROCm / ${{ matrix.arch }}`: two)."""
        rule = next((r for r in self._rules if r.job_id == job_id), None)
        levels = name_levels(api_name.strip())
        for i in range(1, len(levels)):
            caller = " / ".join(levels[:i])
            if rule is not None and any(p is not None and rule.may_fit(p, caller) and p.fullmatch(caller)
                                       for p in (rule.full, rule.head)):
                return _called_levels(levels[i:]) or api_name
        return called_job(api_name)

    def _match_one_of(self, api_name: str, job_id: str) -> JobRef:
        """The matrix values of an API name, read with one job's rule."""
        name = api_name.strip()
        levels = name_levels(name)
        rule = next(r for r in self._rules if r.job_id == job_id)
        for candidate in [" / ".join(levels[:i]) for i in range(1, len(levels))] + [name]:
            for pattern in (rule.full, rule.head):
                m = pattern.fullmatch(candidate) if pattern is not None and rule.may_fit(pattern, candidate) else None
                if m:
                    return JobRef(job_id, self._values(rule, m))
        return JobRef(job_id)

    def rendered(self, check: str) -> JobRef:
        """`match` for a name GitHub renders from the workflow (a required check's): no guess by
        a job id that starts the name."""
        return self._match(check, guess=False)

    def _match(self, api_name: str, guess: bool = True) -> JobRef:
        name = api_name.strip()
        levels = name_levels(name)
        if len(levels) > 1:  # a reusable workflow's job: "caller / callee" (a caller's `name:` may have levels too)
            ref = self._match_one(levels[0], guess)
            if ref.job_id:
                return ref
            for i in range(2, len(levels)):
                longer = self._match_one(" / ".join(levels[:i]), guess)
                if longer.job_id:
                    return longer
            whole = self._match_one(name, guess)
            # Callers that share one `name:` (a build and a test caller): `match_job` tells
            # them apart by the callee.
            return whole if whole.job_id or not ref.ambiguous else ref
        return self._match_one(name, guess)

    def _match_one(self, name: str, guess: bool = True) -> JobRef:
        if "${{" in name:  # a skipped job can show its `name:` template unevaluated
            for rule in self._rules:
                if rule.name_template is not None and " ".join(rule.name_template.split()) == " ".join(name.split()):
                    return JobRef(rule.job_id)
        best: tuple[int, JobRef] | None = None
        tied: list[JobRef] = []  # other jobs whose rule fits as well as the best
        for rule in self._rules:
            if not name.startswith(rule.prefix):
                continue
            for pattern in (rule.full, rule.head):
                if pattern is None or not rule.may_fit(pattern, name):
                    continue
                m = pattern.fullmatch(name)
                if m:
                    ref = JobRef(rule.job_id, self._values(rule, m))
                    score = rule.literal_prefix + (1000 if pattern is rule.full else 0)
                    if best is None or score > best[0]:
                        best, tied = (score, ref), []
                    elif score == best[0] and ref.job_id != best[1].job_id:
                        tied.append(ref)
                    break
        if best:
            if tied:
                return JobRef(None, (), tuple(r.job_id for r in [best[1], *tied] if r.job_id))
            return best[1]
        # Fallback: the longest job id that starts the name.
        candidates = [
            job_id for job_id in self.workflow.jobs if name == job_id or guess and name.startswith(job_id + " ")
        ]
        if candidates:
            return JobRef(max(candidates, key=len))
        return JobRef(None)

    @staticmethod
    def _values(rule: _NameRule, m: re.Match[str]) -> tuple[tuple[str, str], ...]:
        groups = m.groupdict()
        values: dict[str, str] = {}
        listed = groups.pop("__values", None)
        if listed is not None:
            # In the axes' order, each taking as many as it has leaves (an object axis several: its value is
            # theirs, joined); the values an `include` adds come after. An axis of unknown width ends it.
            shown = [v.strip() for v in listed.split(", ")]
            at = 0
            for key, width in zip(rule.axes, rule.widths or (1,) * len(rule.axes)):
                if width is None or at + width > len(shown):
                    break
                values[key] = ", ".join(shown[at:at + width])
                at += width
        for group, value in groups.items():
            if group.startswith("m_") and value is not None:
                values[_key_of(group)] = value
        return tuple(sorted((k, v) for k, v in values.items() if v and "${{" not in v))


# --- one run -----------------------------------------------------------------------------------

class StepTime(NamedTuple):
    name: str
    category: str
    seconds: float
    conclusion: str | None


class JobTiming(NamedTuple):
    """One API job: where its time went. The totals are summed once, when it is read.
    (A named tuple: immutable like the frozen dataclasses elsewhere, and a run has hundreds.)"""

    api_id: int
    name: str
    ref: JobRef
    labels: tuple[str, ...]
    status: str | None
    conclusion: str | None
    queue_seconds: float
    work_steps: tuple[StepTime, ...]  # its test and other steps; setup steps are only summed
    is_amd: bool
    html_url: str | None = None
    setup_seconds: float = 0.0
    test_seconds: float = 0.0
    other_seconds: float = 0.0
    ran_tests: bool = False  # ran at least one test step: a skipped job is no sample
    #: Of a caller of a reusable workflow, the job it runs there (`JobMatcher.called_job`); else "".
    called: str = ""

    @property
    def workflow_job(self) -> str | None:
        return self.ref.job_id

    @property
    def setup_share(self) -> float:
        total = self.setup_seconds + self.test_seconds
        return self.setup_seconds / total if total > 0 else 0.0

    @property
    def stopped_before_tests(self) -> bool:
        """Whether it failed (or timed out) before its test steps, which it has and which did not run:
        no sample of them, and no gap in the rules (TheRock's `Test` after a failed environment setup)."""
        return self.conclusion in ("failure", "timed_out") and not self.ran_tests and \
            any(s.category == "test" for s in self.work_steps)

    def step_seconds(self, name: str) -> float:
        """Seconds of its test or other steps of that name (setup steps are not kept one by one)."""
        return sum(s.seconds for s in self.work_steps if s.name == name)


@dataclass(frozen=True)
class RunTiming:
    """One workflow run."""

    run_id: int
    workflow_path: str
    workflow_name: str
    head_sha: str
    event: str
    html_url: str
    jobs: tuple[JobTiming, ...]
    conclusion: str = ""  # the run's, as GitHub gives it (`cancelled`, `failure`, `startup_failure`, ...)

    @property
    def amd_jobs(self) -> tuple[JobTiming, ...]:
        return tuple(j for j in self.jobs if j.is_amd)

    def total(self, attribute: str) -> float:
        return sum(getattr(j, attribute) for j in self.amd_jobs)


def _require(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, Mapping) or key not in mapping:
        raise BundleError(f"{where}: missing `{key}`")
    return mapping[key]


def workflow_path_of(bundle: Mapping[str, Any], where: str = "bundle") -> str:
    run = _require(bundle, "workflow_run", where)
    path = _require(run, "path", f"{where}: workflow_run")
    if not isinstance(path, str):
        raise BundleError(f"{where}: workflow_run.path must be a string")
    return path.split("@", 1)[0]


def run_timing(bundle: Mapping[str, Any], workflow: Workflow, config: RepoConfig, where: str = "bundle",
               matcher: "JobMatcher | None" = None) -> RunTiming:
    """Classify every step of every job of one run bundle (pass one `matcher` for
    many runs of the same workflow)."""
    run = _require(bundle, "workflow_run", where)
    jobs = _require(bundle, "jobs", where)
    if not isinstance(jobs, list):
        raise BundleError(f"{where}: `jobs` must be a list")
    path = workflow_path_of(bundle, where)
    if path != workflow.path:
        raise BundleError(f"{where}: run {run.get('id')} is from {path}, not {workflow.path}")
    matcher = matcher if matcher is not None and matcher.workflow is workflow else JobMatcher(workflow)
    timings = []
    for i, job in enumerate(jobs):
        if not (type(job) is dict or isinstance(job, Mapping)) or "name" not in job:
            raise BundleError(f"{where}: jobs[{i}] has no `name`")
        timings.append(job_timing(job, matcher, config))
    conclusion = str(run.get("conclusion") or "")
    if conclusion == "cancelled":
        # A run cancelled (a newer push's run replacing it, `cancel-in-progress`; someone): a test step it
        # cut short says nothing of how long the tests take, and its job is no sample. (Not a job that
        # ran into its `timeout-minutes`, which GitHub also calls cancelled, in a run that failed: that
        # run says the shard overruns.)
        timings = [job._replace(ran_tests=False) if job.ran_tests and any(
            s.category == "test" and s.conclusion == "cancelled" for s in job.work_steps) else job for job in timings]
    return RunTiming(
        run_id=int(_require(run, "id", f"{where}: workflow_run")),
        workflow_path=path,
        workflow_name=str(run.get("name") or workflow.name),
        head_sha=str(run.get("head_sha") or ""),
        event=str(run.get("event") or ""),
        html_url=str(run.get("html_url") or ""),
        jobs=tuple(timings),
        conclusion=conclusion,
    )


def seconds_between(start: Any, end: Any) -> float:
    """Seconds from start to end (ISO 8601 stamps; one without a time zone is UTC, as
    every stamp GitHub sends is); zero when either is missing or unreadable, or the
    order is wrong."""
    try:
        began, ended = datetime.fromisoformat(start), datetime.fromisoformat(end)
        if began.tzinfo is None:
            began = began.replace(tzinfo=timezone.utc)
        if ended.tzinfo is None:
            ended = ended.replace(tzinfo=timezone.utc)
        seconds = (ended - began).total_seconds()
    except (TypeError, ValueError):  # None, not a string, not a timestamp
        return 0.0
    return seconds if seconds > 0 else 0.0


_new_tuple = tuple.__new__  # builds a named tuple without its Python-level __new__


def _steps(raw: Iterable[Any], config: RepoConfig, actions: ActionSteps,
           scripts: ScriptSteps | None = None) -> tuple[list[StepTime], float, float, float, bool]:
    """A job's steps: the work (test and other) steps one by one and the seconds per
    category; and whether a test step ran. Any steps list: non-mappings skipped,
    missing names and unreadable timestamps counted as zero, naive stamps as UTC.
    (A flat fast path for steps exactly as GitHub sends them saved 2% of an analysis,
    14.4 against 14.8 ms on the PR #34483 history: not worth a second path.)"""
    steps: list[StepTime] = []
    totals = {"setup": 0.0, "test": 0.0, "other": 0.0}
    ran = tested = False
    # setup steps since the last test step whose rule says so of what runs before the tests alone
    # (`RepoConfig.setup_before_tests`): other, where no test step follows them (where in `steps`, the step)
    pending: list[tuple[int, StepTime]] = []
    read = scripts.reader(raw) if scripts else None
    uses_of = actions.reader(raw)
    for step in raw:
        if not isinstance(step, Mapping):
            continue
        name = str(step.get("name") or "")
        if name in actions:
            category = config.action_category(name, uses_of(name))
        else:
            said = read(name) if read is not None else None
            if said and said[1] == LOOK:
                said = (said[0], "" if tested else "setup")
            category = config.classify(name, False, *said) if said else config.classify(name)
        seconds = seconds_between(step.get("started_at"), step.get("completed_at"))
        conclusion = step.get("conclusion")
        if category == "test":
            tested = True
            for _, late in pending:
                totals["setup"] += late.seconds
            pending.clear()
            if seconds > 0 and conclusion not in ("skipped", None):
                ran = True
        elif category == "setup" and tested and config.setup_before_tests(name):
            pending.append((len(steps), StepTime(name, "other", seconds, conclusion)))
            continue
        totals[category] += seconds
        if category != "setup":
            steps.append(StepTime(name, category, seconds, conclusion))
    for at, late in reversed(pending):  # (after the last test step: what runs after the tests)
        steps.insert(at, late)
        totals["other"] += late.seconds
    return steps, totals["setup"], totals["test"], totals["other"], ran


#: The runner group of GitHub's own hosted runners.
HOSTED_GROUP = "GitHub Actions"


def job_labels(job: Mapping[str, Any]) -> tuple[str, ...]:
    """The labels a job ran on. A job sent to a runner group by name alone (`runs-on: {group: gpu}`)
    is listed with none: it is known by its group, as `group:<name>` (which `amd_runner_pattern` can
    match, and the report names)."""
    labels = tuple(map(str, job.get("labels") or ()))
    group = job.get("runner_group_name")
    if not labels and isinstance(group, str) and group.strip() and group != HOSTED_GROUP and job.get("runner_name") \
            and job.get("conclusion") != "skipped":  # (a skipped job ran on no runner)
        return (f"group:{group}",)
    return labels


def job_timing(job: Mapping[str, Any], matcher: JobMatcher, config: RepoConfig) -> JobTiming:
    labels = job_labels(job)
    raw = job.get("steps") or ()
    ref = matcher.match(str(job["name"]))
    if ref.ambiguous:
        names = (str(s.get("name")) for s in raw if isinstance(s, Mapping))
        ref = matcher.match_job(str(job["name"]), names, labels)
    actions = matcher.action_steps(ref.job_id)
    steps, setup, test, other, ran = _steps(raw, config, actions, matcher.script_steps(ref.job_id, config))
    is_amd = config.is_amd_runner(labels) if labels else _declared_amd(matcher.workflow, ref, config)
    conclusion = job.get("conclusion")
    get = job.get
    return _new_tuple(JobTiming, (  # JobTiming's fields in order, without its Python-level __new__
        int(get("id") or 0), str(job["name"]), ref, labels, get("status"), conclusion,
        seconds_between(get("created_at"), get("started_at")), tuple(steps), is_amd, get("html_url"),
        setup, test, other, ran and conclusion != "skipped",
        matcher.called_job(str(job["name"]), ref.job_id) if ref.job_id in matcher.callers else "",
    ))


#: An input of a reusable workflow that names the runner its jobs take.
_RUNNER_INPUT = re.compile(r"(?i)(?:[a-z0-9]+[-_])*(?:runner|runs[-_]on)(?:[-_](?:arch|labels?|names?|types?))?s?")
# (SGLang's stage workflow `runner_arch: mi300`, `gpu-runner`, `amd_runner`; not `runner_os`, `runner-count`)
_RUNNER_KEY = re.compile(r"(?i)runners?(?:[-_](?:labels?|names?|types?))?|runs[-_]on")


def _declared_amd(workflow: Workflow, ref: JobRef, config: RepoConfig) -> bool:
    """A skipped job has no labels; judge it by the runs-on it declares (of a name several jobs
    give, by any of theirs: pytorch names a lane's build and test callers alike)."""
    ids = (ref.job_id,) if ref.job_id is not None else ref.ambiguous
    return any(job_id in workflow.jobs and declared_amd(workflow.jobs[job_id], config, workflow) is True for job_id in ids)


_INDEX = re.compile(r"\[\s*'([A-Za-z_][\w-]*)'\s*\]")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")
_MATRIX_KEY_PATH = re.compile(r"matrix\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)")  # a value, or a key of it
_INPUT = re.compile(r"(?<![\w.-])(?:github\.event\.)?inputs\.([A-Za-z_][\w-]*)", re.I)
_UNRESOLVED = re.compile(r"\b(?:inputs|vars|needs|github|env|fromJSON|steps)\b", re.I)


def runs_on_items(runs_on: Any) -> list[Any]:
    """What a job's `runs-on` names, item by item: its labels; of `{group: ..., labels: [...]}`, the group
    as `group:<name>` (as its jobs' labels say it once they run: `job_labels`) and the labels."""
    if isinstance(runs_on, dict):
        labels = runs_on.get("labels")
        group = runs_on.get("group")
        return [f"group:{group}" if isinstance(group, str) and group and "${{" not in group else group,
                *(labels if isinstance(labels, list) else [labels])]
    return runs_on if isinstance(runs_on, list) else [runs_on]


def declared_amd(job: JobDef, config: RepoConfig, workflow: Workflow | None = None) -> bool | None:
    """Whether a workflow job's `runs-on` names an AMD runner: True, False, or None
    when it cannot be told (an expression whose value the file does not show).
    Matrix references take every value of their axis; an expression such as
    `format('linux-{0}-1gpu', inputs.runner_arch || 'mi300')` is read with its
    literals, so its default (`mi300`) counts. `inputs.<name>` may be the default or an
    option the job's `workflow` gives that input: an AMD one makes the job AMD; others
    decide nothing (a caller may pass another runner)."""
    inputs = workflow.input_values if workflow is not None else {}
    if job.runs_on is None:
        if job.uses and workflow is not None:  # a caller: by the runners of the shard list it is passed, if any,
            from .plan import passed_runners  # (the planner reads this module)
            if runners := passed_runners(workflow, job.id):  # (pytorch's `test-matrix`, written by its build caller)
                return any(config.is_amd_runner(runner) for runner in runners)
            raw = (workflow.data.get("jobs") or {}).get(job.id)  # or a runner it passes by name (`runner: mi300`)
            given = raw.get("with") if isinstance(raw, dict) else None
            runners = [value for key, value in given.items() if _RUNNER_INPUT.fullmatch(str(key))] \
                if isinstance(given, dict) else []
            named = [value for value in runners if isinstance(value, str) and "${{" not in value]
            if any(config.is_amd_runner(value) for value in named):
                return True
            # (not an AMD one: only a `runner:` or `runs-on:` of its own says so: `runner_arch: X64` is a CPU's
            # architecture, beside a `gpu: mi300x`; and one an expression gives may be the GPU runner)
            if named and len(named) == len(runners) and all(_RUNNER_KEY.fullmatch(str(key)) for key, value
                                                            in given.items() if value in runners):
                return False
        return None if job.uses else False
    items = [item for item in runs_on_items(job.runs_on) if item is not None]
    texts: list[str] = []
    unresolved = False
    axes = job.matrix_axes
    includes = job.matrix.get("include") if isinstance(job.matrix, dict) else None
    for item in map(str, items):
        for match in _EXPR.finditer(item, 0, expression_end(item)):
            expr = match.group(1).strip()
            ref = _MATRIX_KEY_PATH.fullmatch(expr)
            if ref:
                key, *path = ref.group(1).split(".")
                values = list(axes.get(key, []))
                if isinstance(includes, list):
                    values += [inc.get(key) for inc in includes if isinstance(inc, dict) and key in inc]
                # `matrix.system.runner`: a key of each object value (rocm-systems' aqlprofile CI).
                for part in path:
                    values = [v.get(part) if isinstance(v, dict) else None for v in values]
                if not values or None in values:
                    unresolved = True
                texts += [str(v) for v in values if v is not None]
                continue
            expr = _INDEX.sub(r".\1", expr)  # (`inputs['runner']`: a key, not a label)
            literals = [lit.replace("''", "'") for lit in _QUOTED.findall(expr)]
            texts += literals
            if not literals and _UNRESOLVED.search(expr):
                unresolved = True
            if any(config.is_amd_runner(value) for name in _INPUT.findall(expr) for value in inputs.get(name.lower(), ())):
                return True
        texts.append(_EXPR.sub(" ", item[:expression_end(item)]) + item[expression_end(item):])
    if config.is_amd_runner(tuple(t for t in texts if t.strip())):
        return True
    return None if unresolved else False


# --- over runs ---------------------------------------------------------------------------------

def percentile(values: Iterable[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100), as numpy's default."""
    data = sorted(values)
    if not data:
        return 0.0
    if len(data) == 1:
        return data[0]
    rank = (len(data) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return data[low] + (data[high] - data[low]) * (rank - low)


def median(values: Iterable[float]) -> float:
    return percentile(values, 50)


@dataclass(frozen=True)
class Summary:
    median: float
    p90: float

    @classmethod
    def of(cls, values: Iterable[float]) -> "Summary":
        data = list(values)
        return cls(median(data), percentile(data, 90))


@dataclass(frozen=True)
class JobStats:
    """One workflow job over the history: only runs where it ran its tests count."""

    job_id: str
    samples: int  # runs in which it ran tests
    per_run: tuple[tuple[JobTiming, ...], ...]  # its API jobs (shards) per sampled run
    labels: tuple[str, ...]

    # Derived once (the planner asks for them again and again); the fields never change.
    @functools.cached_property
    def shards(self) -> tuple[JobTiming, ...]:
        return tuple(j for run in self.per_run for j in run)

    @functools.cached_property
    def setup(self) -> Summary:
        return Summary.of(j.setup_seconds for j in self.shards)

    @functools.cached_property
    def test(self) -> Summary:
        return Summary.of(j.test_seconds for j in self.shards)

    @functools.cached_property
    def other(self) -> Summary:
        return Summary.of(j.other_seconds for j in self.shards)

    @functools.cached_property
    def work(self) -> Summary:
        """Its tests and its other steps: all but its setup (what a fold moves into a host)."""
        return Summary.of(j.test_seconds + j.other_seconds for j in self.shards)

    @functools.cached_property
    def share(self) -> float:
        """Setup share over all sampled shards: setup / (setup + test)."""
        setup = sum(j.setup_seconds for j in self.shards)
        total = setup + sum(j.test_seconds for j in self.shards)
        return setup / total if total else 0.0

    def step_p90(self, name: str) -> float:
        return percentile((j.step_seconds(name) for j in self.shards), 90)


def _without_values(level: str) -> str:
    """A level of a job's name less the parenthesised groups it ends with (its matrix values: `Test rocblas (shard
    1/3) (gfx94X-dcgpu)` is `Test rocblas`), read from its end once (review150 c05: the pattern that did it read the
    rest of the name from each blank and each group, 32 KB in 4 s)."""
    end = len(level)
    while end and level[end - 1].isspace():
        end -= 1
    cut = None
    while end and level[end - 1] == ")":
        start = level.rfind("(", 0, end - 1)
        if start < 0 or level.find(")", start + 1, end - 1) >= 0:  # (no parentheses within a group)
            break
        cut = end = start
        while end and level[end - 1].isspace():
            end -= 1
    return level if cut is None else level[:cut]


def name_levels(name: str) -> list[str]:
    """An API job name's levels, split at ` / ` outside parentheses (a reusable workflow's job is
    `caller / callee`; onnxruntime's matrix values `(x64 / Release)` are one level's)."""
    levels, depth, start, i = [], 0, 0, 0
    while i < len(name):
        char = name[i]
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and name.startswith(" / ", i):
            levels.append(name[start:i])
            start = i = i + 3
            continue
        i += 1
    levels.append(name[start:])
    return levels


def _called_levels(levels: list[str]) -> str:
    """The called job's levels, each without its matrix values, one that repeats the one before
    it once."""
    kept: list[str] = []
    for level in levels:
        level = _without_values(level).strip()
        if level and (not kept or kept[-1] != level):
            kept.append(level)
    return " / ".join(kept)


def called_job(name: str) -> str:
    """Which job of a reusable workflow an API job of its caller is, by its name: the levels
    after the caller's, each without its matrix values, a level that repeats the one before
    it once (TheRock's `Linux::release / Test gfx94X-dcgpu / Test rocblas / Test rocblas
    (shard 1/3) (gfx94X-dcgpu)` is `Test gfx94X-dcgpu / Test rocblas`; transformers' `Model CI /
    Single GPU tests (1gpu, 0) /  (models/albert)` is `Single GPU tests`): the jobs of one
    called job are alike, as a matrix's shards are; those of two are different suites. The
    caller's name is taken as its first level (`JobMatcher.called_job` knows its `name:`)."""
    return _called_levels(name_levels(name)[1:]) or name


def job_stats(runs: Iterable[RunTiming], key: Callable[[JobTiming], str | None] | None = None) -> dict[str, JobStats]:
    """Per workflow job (or per `key`, None leaving a job out): its shards in every run
    where it ran tests."""
    per_job: dict[str, list[tuple[JobTiming, ...]]] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for run in runs:
        grouped: dict[str, list[JobTiming]] = {}
        for job in run.amd_jobs:
            group = job.workflow_job if key is None else key(job)
            if group and job.ran_tests:
                grouped.setdefault(group, []).append(job)
                labels.setdefault(group, job.labels)
        for job_id, shards in grouped.items():
            per_job.setdefault(job_id, []).append(tuple(shards))
    return {
        job_id: JobStats(job_id, len(per_run), tuple(per_run), labels.get(job_id, ()))
        for job_id, per_run in per_job.items()
    }


def called_stats(runs: Iterable[RunTiming], workflow: Workflow) -> dict[str, dict[str, JobStats]]:
    """Per job of the workflow that calls a reusable one: per job it runs there (`called_job`),
    its shards in every run where it ran tests. Its own `JobStats` pool them all, as one job's
    shards (TheRock's `test_components`: a job per library, minutes of tests to hours)."""
    if not any(job.uses for job in workflow.jobs.values()):
        return {}
    out: dict[str, dict[str, JobStats]] = {}
    pooled = job_stats(runs, lambda job: f"{job.workflow_job} / {job.called}" if job.called else None)
    for key, stats in pooled.items():
        caller, called = key.split(" / ", 1)  # (a job id has no space)
        out.setdefault(caller, {})[called] = stats
    return out
