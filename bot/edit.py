"""Apply a plan to the text of a lane's workflow file, surgically, and check it.

Every change is a splice of the original text at positions the YAML parser gave:
comments, blank lines and quoting elsewhere stay byte for byte. After splicing,
the result is parsed again and compared, as data, with the original transformed
by the plan: the intended change and nothing else must have happened.

Pure: text in, text and a diff out.
"""

from __future__ import annotations

import bisect
import contextlib
import difflib
import functools
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple

import yaml

from .config import RepoConfig
from .workflow import (JOB_TOTAL, JobDef, StepDef, Workflow, WorkflowError, compose_workflow, directive, mapping_get,
                       mapping_item, odd_lines, parse_workflow, shard_entry)


class EditError(ValueError):
    """A plan that cannot be applied to a file as written."""


class VerificationError(ValueError):
    """A patched file that is not what the plan says it should be."""


@dataclass(frozen=True)
class FoldEdit:
    suite: str
    host: str
    shard_key: str | None  # None: the host is one standalone job
    shard_value: Any
    timeout_minutes: int
    comment: tuple[str, ...]  # comment lines (without '#') written above the moved steps


@dataclass(frozen=True)
class ReshardEdit:
    job: str
    shard_key: str
    from_count: int
    to_count: int
    flag: str
    #: The `with:` key of a caller that passes its reusable workflow the count as JSON
    #: (`plan.StagePartitions`): changed there, in place of a matrix and a flag.
    passed_as: str | None = None


@dataclass(frozen=True)
class ListTrimEdit:
    """One configuration of a written-out shard list on fewer shards."""

    config: str
    runner: str | None  # None: the entries name no runner
    from_count: int
    to_count: int

    def holds(self, entry: Any) -> bool:
        """Whether a parsed entry of the list is one of this configuration's shards (`shard_entry`,
        as `plan.passed_shards` groups them)."""
        fields = shard_entry(entry)
        return fields is not None and (fields[0], fields[2], fields[3]) == (self.config, self.from_count, self.runner)


@dataclass(frozen=True)
class ListEdit:
    """A shard list written in a job's `with:` as a literal block (pytorch's build job's
    `test-matrix`, one `{ config, shard, num_shards, runner }` entry per line): for each trim,
    its entries past the new count go and the rest say the new `num_shards`."""

    job: str  # the caller the list is passed to
    writer: str  # the job whose `with:` holds the list
    key: str
    trims: tuple[ListTrimEdit, ...]


@dataclass(frozen=True)
class LaneChange:
    path: str
    folds: tuple[FoldEdit, ...] = ()
    reshards: tuple[ReshardEdit, ...] = ()
    lists: tuple[ListEdit, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.folds and not self.reshards and not self.lists


@dataclass(frozen=True)
class FileEdit:
    path: str
    before: str
    after: str
    warnings: tuple[str, ...] = field(default=())
    splices: tuple[tuple[int, int, str], ...] = field(default=(), compare=False, repr=False)


# --- positions -----------------------------------------------------------------------------------

#: The characters of YAML's line breaks (CRLF is two of them).
_BREAKS = "\r\n\x85\u2028\u2029"


def _text_of(line: str) -> str:
    """A line without its line break."""
    return line.rstrip(_BREAKS)


def _is_blank(line: str) -> bool:
    return not line.strip()


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def last_line(node: yaml.Node, lines: list[str]) -> int:
    """The last line (0-based) that holds text of this node."""
    if isinstance(node, yaml.ScalarNode):
        end = node.end_mark
        if node.style in ("|", ">"):
            line = end.line if end.column > 0 else end.line - 1
            if _keeps(node, lines):  # its trailing empty lines are content too
                return line
            header = _block_header(node, lines)
            indent = _block_indent(lines, node.start_mark.line + 1, line, node.value if any(
                c.isdigit() for c in header[1:]) else None)
            while line > node.start_mark.line and _is_blank(lines[line]) and not _block_content(lines[line], indent):
                line -= 1
            return line
        return end.line if end.column > 0 else max(end.line - 1, node.start_mark.line)
    if isinstance(node, yaml.MappingNode):
        if node.flow_style or not node.value:
            return node.end_mark.line
        key, value = node.value[-1]
        if isinstance(value, yaml.ScalarNode) and value.start_mark.index == value.end_mark.index:
            return key.end_mark.line  # `key:` with an empty value
        return max(last_line(value, lines), key.end_mark.line)
    if isinstance(node, yaml.SequenceNode):
        if node.flow_style or not node.value:
            return node.end_mark.line
        return last_line(node.value[-1], lines)
    return node.end_mark.line


def _keeps_blank_lines(node: yaml.Node, lines: list[str]) -> bool:
    """Whether the node's text ends in a keep-chomping block scalar (`|+`, `>2+`): the blank lines
    right after it are its value's. (Of a moved step: of the value of its last key but `if:` and
    `timeout-minutes:`, which move up under its name.)"""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style and node.value:
        node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
    return isinstance(node, yaml.ScalarNode) and node.style in ("|", ">") and _keeps(node, lines)


def _block_header(node: yaml.ScalarNode, lines: list[str]) -> str:
    """A block scalar's indicators as written: `|`, `|+`, `>2-`, `|+2`."""
    return lines[node.start_mark.line][node.start_mark.column:][:3]


def _keeps(node: yaml.ScalarNode, lines: list[str]) -> bool:
    """Whether a block scalar keeps its trailing empty lines (`|+`, `>2+`)."""
    return "+" in _block_header(node, lines)


def _block_indent(lines: list[str], first: int, last: int, value: str | None = None) -> int:
    """The indentation of a block scalar's content: its first line with text (lines `first` to
    `last`); past every line's when none has any. With an indentation indicator (`|2`, `value`
    given) the first line may be indented past it: its spaces past it are the value's first text's."""
    for line in lines[first:last + 1]:
        if not _is_blank(line):
            spaces = len(line) - len(line.lstrip(" "))
            if value is not None:
                text = next((v for v in value.split("\n") if v.strip()), "")
                spaces -= len(text) - len(text.lstrip(" "))
            return spaces
    return max((len(line) for line in lines[first:last + 1]), default=0)


def _block_content(line: str, indent: int) -> bool:
    """Whether a line with no text is still content of a block scalar indented `indent`: white
    space past the indentation (`pytest a\\n<spaces>\\n` keeps them), or a tab."""
    text = _text_of(line)
    return len(text) > indent or "\t" in text


_BANNER = re.compile(r"#\s*([=\-#*~])\1{4,}")


def leading_comment_start(line: int, col: int, lines: list[str]) -> int:
    """First line of the comment block directly above `line` at column `col`
    (banners like `# ===== section =====` belong to the section, not the item)."""
    start = line
    while start > 0:
        above = lines[start - 1]
        if _is_comment(above) and len(above) - len(above.lstrip()) == col and not _BANNER.match(above.strip()):
            start -= 1
        else:
            break
    return start


class _Splicer:
    """Non-overlapping replacements of the original text, applied at once."""

    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        self.lines = workflow.lines
        self.edits: list[tuple[int, int, str]] = []
        self.crlf = workflow.crlf  # a file written with CRLF line ends (on Windows) gets them in what is inserted too

    def line_start(self, line: int) -> int:
        return self.wf.line_starts[line] if line < len(self.wf.line_starts) else len(self.wf.text)

    def replace(self, start: int, end: int, text: str) -> None:
        """Replace text[start:end]; the edit is shrunk to the part that really
        changes, so edits of neighbouring spans do not collide."""
        old = self.wf.text[start:end]
        if self.crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        head = _common_prefix(old, text)
        if head == len(old) == len(text):
            return
        limit = min(len(old), len(text)) - head
        tail = _common_prefix(old[::-1][:limit], text[::-1][:limit])
        self.edits.append((start + head, end - tail, text[head : len(text) - tail]))

    def delete_lines(self, first: int, last: int) -> None:
        self.replace(self.line_start(first), self.line_start(last + 1), "")

    def insert_at_line(self, line: int, text: str) -> None:
        offset = self.line_start(line)
        if offset == len(self.wf.text) and self.wf.text and self.wf.text[-1] not in _BREAKS:
            text = "\n" + text  # after a last line with no line break: on a line of its own
        self.replace(offset, offset, text)

    def ordered(self) -> list[tuple[int, int, str]]:
        return sorted(self.edits, key=_place)

    def result(self) -> str:
        ordered = self.ordered()
        for (s1, e1, _), (s2, e2, _) in zip(ordered, ordered[1:]):
            if s2 < e1:
                raise EditError(f"{self.wf.path}: two edits overlap near offset {s2}")
        return _splice(self.wf.text, ordered)


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (halving the search: string compares run in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


# --- the edits -----------------------------------------------------------------------------------

def _mentions(text: str, job_id: str) -> Iterator[int]:
    """Offsets where `job_id` appears as a whole id, not inside a longer one
    (`str.find` between candidates: a regex with a look-behind scans every offset)."""
    start = text.find(job_id)
    while start >= 0:
        end = start + len(job_id)
        if not (start and _is_id_char(text[start - 1])) and not (end < len(text) and _is_id_char(text[end])):
            yield start
        start = text.find(job_id, start + 1)


def _is_id_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_-"


def _remove_seq_items(sp: _Splicer, seq: yaml.SequenceNode, drop: set[str]) -> int:
    """Remove the scalar items in `drop` from a flow or block sequence; returns how many."""
    removed = 0
    items = seq.value
    for i, item in enumerate(items):
        if not (isinstance(item, yaml.ScalarNode) and item.value in drop):
            continue
        removed += 1
        line = item.start_mark.line
        if not seq.flow_style:
            sp.delete_lines(line, last_line(item, sp.lines))
            continue
        text = sp.lines[line]
        own_line = text.strip().rstrip(",").strip() == sp.wf.text[item.start_mark.index:item.end_mark.index]
        if own_line and item.end_mark.line == line and seq.start_mark.line != line and seq.end_mark.line != line:
            sp.delete_lines(line, line)
            continue
        src = sp.wf.text
        after = re.match(r"\s*,\s*", src[item.end_mark.index:])
        if after and i + 1 < len(items):
            sp.replace(item.start_mark.index, item.end_mark.index + after.end(), "")
        else:
            before = re.search(r",\s*$", src[seq.start_mark.index:item.start_mark.index])
            start = seq.start_mark.index + before.start() if before else item.start_mark.index
            end = item.end_mark.index + (after.end() if after else 0) if not before else item.end_mark.index
            sp.replace(start, end, "")
    return removed


def _job_lines(sp: _Splicer, job: JobDef) -> tuple[int, int]:
    """The lines a job owns: its comment block above, itself, the blank lines after."""
    first = leading_comment_start(job.key_node.start_mark.line, job.key_node.start_mark.column, sp.lines)
    last = last_line(job.node, sp.lines)
    while last + 1 < len(sp.lines) and _is_blank(sp.lines[last + 1]):
        last += 1
    return first, last


def _update_comment(line: str, old: int, new: int) -> str:
    """In the YAML comment of a line, a count that was `old` becomes `new`."""
    match = re.search(r"(^|\s)#", line)
    if not match:
        return line
    head, comment = line[: match.start()], line[match.start():]
    comment = re.sub(rf"(?<![\w.]){old}(?![\w.])", str(new), comment)
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
    if old in words and new in words:
        comment = re.sub(rf"\b{words[old]}\b", words[new], comment)
        comment = re.sub(rf"\b{words[old].capitalize()}\b", words[new].capitalize(), comment)
    return head + comment


def _reindent(lines: list[str], delta: int) -> list[str]:
    out = []
    for line in lines:
        if not _text_of(line):  # its line break only: "\n", CRLF, or one YAML counts too
            out.append(line)
        elif delta >= 0:  # (white space alone moves too: in a block scalar, what is past its indentation is content)
            out.append(" " * delta + line)
        else:
            strip = min(-delta, len(line) - len(line.lstrip(" ")))
            out.append(line[strip:])
    return out


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when PyYAML was built with it


def _yaml_scalar(text: str) -> str:
    """`text` as a YAML scalar that reads back as itself."""
    with contextlib.suppress(yaml.YAMLError):  # text YAML cannot read plain is quoted below
        if yaml.load(f"k: {text}", Loader=_SAFE_LOADER) == {"k": text}:
            return text
    return "'" + text.replace("'", "''") + "'"


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def shard_condition(key: str | None, value: Any, existing: str | None) -> str:
    """The `if:` of a step moved onto one shard (or into a standalone job, `key` None):
    that shard only, and after a failure of the steps before it too; an `if:` the step
    had is and-ed in."""
    base = "success() || failure()" if key is None else f"matrix.{key} == {_literal(value)} && (success() || failure())"
    if key is None and existing is not None and existing.strip():
        base = f"({base})"
    if existing is None or not existing.strip():
        return base
    inner = existing.strip()
    whole = re.fullmatch(r"\$\{\{(.*)\}\}", inner, re.S)
    if whole:
        inner = whole.group(1).strip()
    return f"{base} && ({' '.join(inner.split())})"


def _trails(line: str, dash_col: int) -> bool:
    """Whether a line after a list item's text still goes with it: a comment, or white space alone,
    indented past the items' dash (at the dash or before it, a comment leads what follows)."""
    text = _text_of(line)
    rest = text.lstrip(" ")
    return len(text) - len(rest) > dash_col and (not rest.strip() or rest.startswith("#"))


def _dash_column(item: yaml.Node, lines: list[str]) -> int | None:
    """The column of the `-` that begins a block list's item, on the line where the item starts
    (`- name:` or `-   name:`); None when it is not there (a flow list, an item on the next line)."""
    before = lines[item.start_mark.line][:item.start_mark.column].rstrip(" ")
    return len(before) - 1 if before.endswith("-") and not before[:-1].strip(" ") else None


def _step_text(sp: _Splicer, step: StepDef, dash_col: int, *, condition: str, timeout: int) -> list[str]:
    """The source lines of a step, re-indented to `dash_col`, with `if:` and
    `timeout-minutes:` set right after its name."""
    node = step.node
    lines = sp.lines
    last = last_line(node, lines)
    pairs = node.value
    key_col = node.start_mark.column
    step_dash = key_col - 2  # (where `- ` would put the dash: the text is moved by its keys' column)
    real_dash = _dash_column(node, lines)
    blocks: list[tuple[str, list[str]]] = []
    for i, (k, v) in enumerate(pairs):
        first = k.start_mark.line
        end = pairs[i + 1][0].start_mark.line - 1 if i + 1 < len(pairs) else last
        block = lines[first : end + 1]
        if i == 0 and real_dash is not None:  # the item's first line carries the dash (`- `, or `-   `)
            head = block[0]
            block = [head[:real_dash] + " " + head[real_dash + 1 :]] + block[1:]
        blocks.append((k.value, block))
    kept = [(k, b) for k, b in blocks if k not in ("if", "timeout-minutes")]
    pad = " " * key_col
    extra = [f"{pad}if: {_yaml_scalar(condition)}\n", f"{pad}timeout-minutes: {timeout}\n"]
    out: list[str] = []
    inserted = False
    for k, block in kept:
        out.extend(block if block[-1].endswith("\n") else block[:-1] + [block[-1] + "\n"])
        if k == "name" and not inserted:
            out.extend(extra)
            inserted = True
    if not inserted:
        out = extra + out
    out = _reindent(out, dash_col - step_dash)
    first_line = out[0]
    out[0] = first_line[:dash_col] + "- " + first_line[dash_col + 2 :]
    return out


def apply_change(workflow: Workflow, change: LaneChange, config: RepoConfig) -> FileEdit:
    """Splice a lane change into the workflow text. Raises EditError when the file
    does not have what the change names."""
    sp = _Splicer(workflow)
    jobs = workflow.jobs
    hosts: dict[str, str] = {}
    moved: dict[int, str] = {}  # id() of the splice inserting a suite's steps -> the suite
    for fold in change.folds:
        for job_id in (fold.suite, fold.host):
            if job_id not in jobs:
                raise EditError(f"{workflow.path}: no job `{job_id}`")
        suite, host = jobs[fold.suite], jobs[fold.host]
        moving, _ = suite.fold_steps(host, config.step_category)
        test_indexes = [s.index for s in host.steps if config.step_category(s) == "test"]
        if not moving or not test_indexes:
            raise EditError(f"{workflow.path}: `{fold.suite}` has no steps to move or `{fold.host}` no test step")
        after = host.steps[test_indexes[-1]]
        dash_col = _dash_column(after.node, sp.lines)  # (the moved steps are items of its list: their dash goes there)
        if dash_col is None:
            raise EditError(f"{workflow.path}: the steps of `{fold.host}` are not a block list")
        body: list[str] = [" " * dash_col + ("# " + c if c else "#") + "\n" for c in fold.comment]
        for step in moving:
            condition = shard_condition(fold.shard_key, fold.shard_value, step.if_)
            body.extend(_step_text(sp, step, dash_col, condition=condition, timeout=fold.timeout_minutes))
        end = last_line(after.node, sp.lines)
        while end + 1 < len(sp.lines) and _trails(sp.lines[end + 1], dash_col):
            end += 1  # (its commented-out keys stay with it: after a moved block, they would be the block's text)
        is_last = after.index == len(host.steps) - 1
        blank_between = end + 1 < len(sp.lines) and _is_blank(sp.lines[end + 1])
        count = len(sp.edits)
        last_kept = [v for k, v in moving[-1].node.value if k.value not in ("if", "timeout-minutes")][-1:]
        if blank_between and last_kept and _keeps_blank_lines(last_kept[0], sp.lines):
            # the moved steps end in a `|+` block: a blank line after them would be its text. They go after
            # the blank lines, right before what follows (or the file's end)
            line = end + 1
            while line < len(sp.lines) and _is_blank(sp.lines[line]):
                line += 1
            sp.insert_at_line(line, "".join(body))
        elif is_last:
            sp.insert_at_line(end + 1, ("\n" if blank_between else "") + "".join(body))
        elif blank_between:
            sp.insert_at_line(end + 2, "".join(body) + "\n")
        else:
            sp.insert_at_line(end + 1, "".join(body))
        moved.update((id(e), fold.suite) for e in sp.edits[count:])
        first, last = _job_lines(sp, suite)
        sp.delete_lines(first, last)
        hosts[fold.suite] = fold.host
    removed = set(hosts)
    if removed:
        _remove_references(sp, workflow, hosts)
    for reshard in change.reshards:
        _apply_reshard(sp, workflow, reshard)
    for listed in change.lists:
        _apply_list(sp, workflow, listed)
    fewer = _fewer_jobs(change)
    for job in workflow.jobs.values():
        if job.id in removed:
            continue
        for spec in _wait_specs(job):
            _edit_wait_spec(sp, spec, drop=removed, fewer=fewer)
    after_text = sp.result()
    warnings: list[str] = []
    if not removed:  # (no job gone: no mention of one to look for)
        return FileEdit(workflow.path, workflow.text, after_text, (), tuple(sp.ordered()))
    after_lines = after_text.splitlines(keepends=True)
    line_starts = list(itertools.accumulate(map(len, after_lines), initial=0))
    own = _moved_spans(sp.ordered(), moved)
    for job_id in sorted(removed):
        spans = own.get(job_id, ())
        offsets = (o for o in _mentions(after_text, job_id) if not any(s <= o < e for s, e in spans))
        numbers = dict.fromkeys(number for offset in offsets
                                if _is_reference(after_lines, (number := bisect.bisect_right(line_starts, offset)) - 1,
                                                 offset - line_starts[number - 1]))
        for number in numbers:  # 1-based: the count of line starts at or before the match
            warnings.append(f"{workflow.path}:{number}: still mentions removed job `{job_id}`: {after_lines[number - 1].strip()[:120]}")
    return FileEdit(workflow.path, workflow.text, after_text, tuple(warnings), tuple(sp.ordered()))


_KEY = re.compile(r"\s*(?:-\s+)?([\w.-]+):(?:\s|$)")
#: Keys whose plain text is words or shell, not a job reference (outside `${{ }}`): a suite named
#: `tests` is not "mentioned" by `pytest tests/ops` or `name: Run op tests`.
_PROSE_KEYS = frozenset({"name", "run", "description", "shell", "working-directory", "run-name"})


def _is_reference(lines: list[str], index: int, column: int) -> bool:
    """Whether a job id found at `column` of line `index` may refer to the job: in an
    expression, an `if:`, a `needs:` or an input; not in a comment, a name or a script's words."""
    line = lines[index]
    before = line[:column]
    if line.lstrip().startswith("#"):
        return False
    if before.rfind("${{") > before.rfind("}}"):
        return True  # inside an expression
    if re.search(r"(?:^|\s)#", before):
        return False  # a comment after the value
    key = _context_key(lines, index)
    return key not in _PROSE_KEYS


def _context_key(lines: list[str], index: int) -> str | None:
    """The key a line's value belongs to: its own, else that of the nearest line above it that
    is indented less (a block scalar's or a list's key)."""
    if match := _KEY.match(lines[index]):
        return match.group(1)
    line = lines[index]
    indent = len(line) - len(line.lstrip())
    for previous in reversed(lines[:index]):
        if previous.strip() and len(previous) - len(previous.lstrip()) < indent:
            match = _KEY.match(previous)
            return match.group(1) if match else None
    return None


def _moved_spans(ordered: list[tuple[int, int, str]], moved: dict[int, str]) -> dict[str, list[tuple[int, int]]]:
    """Where, in the result, each folded suite's own steps (and foldbot's comment above
    them) landed. A mention of the suite there is the suite's own text moved with its
    tests (`run_suite.py --suite <id>`: the suite's name, not a job reference); a job
    cannot refer to itself by id (`needs.<id>` holds only its dependencies), so it is no
    reference left behind. Mentions of *another* removed job there still count."""
    spans: dict[str, list[tuple[int, int]]] = {}
    shift = 0
    for edit in ordered:
        start, end, new = edit
        suite = moved.get(id(edit))
        if suite is not None:
            spans.setdefault(suite, []).append((start + shift, start + shift + len(new)))
        shift += len(new) - (end - start)
    return spans


def _remove_references(sp: _Splicer, workflow: Workflow, hosts: dict[str, str]) -> None:
    """A removed suite leaves every `needs:`; a job that needed it and not its host
    now needs the host, where the suite's tests run."""
    removed = set(hosts)
    for job in workflow.jobs.values():
        if job.id in removed:
            continue
        item = mapping_item(job.node, "needs")
        if not item:
            continue
        _, value = item
        if isinstance(value, yaml.ScalarNode):
            if value.value in removed:
                sp.replace(value.start_mark.index, value.end_mark.index, hosts[value.value])
            continue
        if not isinstance(value, yaml.SequenceNode):
            continue
        present = {v.value for v in value.value if isinstance(v, yaml.ScalarNode)}
        drop: set[str] = set()
        for node in value.value:
            if isinstance(node, yaml.ScalarNode) and node.value in removed:
                host = hosts[node.value]
                if host in present:
                    drop.add(node.value)
                else:
                    sp.replace(node.start_mark.index, node.end_mark.index, host)
                    present.add(host)
        _remove_seq_items(sp, value, drop)
    on = workflow.on_node()
    for trigger in ("workflow_dispatch", "workflow_call"):
        inputs = mapping_get(mapping_get(on, trigger), "inputs")
        if not isinstance(inputs, yaml.MappingNode):
            continue
        for _, spec in inputs.value:
            options = mapping_get(spec, "options")
            if isinstance(options, yaml.SequenceNode):
                _remove_seq_items(sp, options, removed)


def _wait_specs(job: JobDef) -> list[yaml.ScalarNode]:
    """The `jobs:` inputs of wait-for-jobs steps: JSON lists of {prefix, expected_count}."""
    out = []
    for step in job.steps:
        if not (isinstance(step.with_, dict) and isinstance(step.with_.get("jobs"), str)):
            continue  # the plain data answers first; the node is looked up only for a spec
        jobs_node = mapping_get(mapping_get(step.node, "with"), "jobs")
        if isinstance(jobs_node, yaml.ScalarNode) and '"prefix"' in jobs_node.value:
            out.append(jobs_node)
    return out


_SPEC_ENTRY = r'\{[^{}]*?\\?"prefix\\?"\s*:\s*\\?"%s\\?"[^{}]*\}'


def _fewer_jobs(change: LaneChange) -> dict[str, int]:
    """How many fewer API jobs each job id yields after the change."""
    fewer = {f.suite: 1 for f in change.folds}
    for r in change.reshards:
        fewer[r.job] = fewer.get(r.job, 0) + r.from_count - r.to_count
    return fewer


_COUNTED_ENTRY = re.compile(
    r'\{[^{}]*?\\?"prefix\\?"\s*:\s*\\?"(?P<prefix>[^"\\]*)\\?"[^{}]*?\\?"expected_count\\?"\s*:\s*(?P<count>\d+)[^{}]*\}'
)


def _edit_wait_spec(sp: _Splicer, node: yaml.ScalarNode, drop: set[str], fewer: dict[str, int]) -> None:
    """Drop the entries of removed jobs; lower `expected_count` of every entry whose
    prefix matches jobs that now yield fewer API jobs (wait-for-jobs counts jobs by
    name prefix, so a prefix can cover several job ids)."""
    start, end = node.start_mark.index, node.end_mark.index
    src = sp.wf.text[start:end]
    new = src
    for job_id in drop:
        entry = re.compile(_SPEC_ENTRY % re.escape(job_id))
        match = entry.search(new)
        while match:
            line_start = new.rfind("\n", 0, match.start()) + 1
            line_end_idx = new.find("\n", match.end())
            line_end = len(new) if line_end_idx < 0 else line_end_idx + 1
            rest = new[match.end():line_end].strip()
            head = new[line_start:match.start()].strip()
            if not head and rest in ("", ","):
                if rest == "":  # the last entry: the previous entry loses its comma
                    new = new[:line_start] + new[line_end:]
                    new = re.sub(r",(\s*)(\n\s*\])", r"\1\2", new, count=1)
                else:
                    new = new[:line_start] + new[line_end:]
            else:
                after = re.match(r"\s*,\s*", new[match.end():])
                if after:
                    new = new[: match.start()] + new[match.end() + after.end():]
                else:
                    before = re.search(r",\s*$", new[: match.start()])
                    cut = before.start() if before else match.start()
                    new = new[:cut] + new[match.end():]
            match = entry.search(new)
    def recount(m: re.Match[str]) -> str:
        prefix = m.group("prefix")
        less = sum(n for job_id, n in fewer.items() if job_id.startswith(prefix))
        if not less:
            return m.group(0)
        return m.group(0)[: m.start("count") - m.start()] + str(int(m.group("count")) - less) + m.group(0)[m.end("count") - m.start():]

    new = _COUNTED_ENTRY.sub(recount, new)
    if new != src:
        sp.replace(start, end, new)


def _apply_reshard(sp: _Splicer, workflow: Workflow, reshard: ReshardEdit) -> None:
    job = workflow.jobs.get(reshard.job)
    if job is None:
        raise EditError(f"{workflow.path}: no job `{reshard.job}`")
    if reshard.passed_as is not None:
        _apply_partitions(sp, workflow, job, reshard)
        return
    matrix = mapping_get(mapping_get(job.node, "strategy"), "matrix")
    axis = mapping_get(matrix, reshard.shard_key)
    if not isinstance(axis, yaml.SequenceNode) or len(axis.value) != reshard.from_count:
        raise EditError(f"{workflow.path}: `{reshard.job}` has no {reshard.from_count}-entry `{reshard.shard_key}` list")
    keep = reshard.to_count
    text = workflow.text
    if axis.flow_style:
        line = axis.start_mark.line
        new = text[axis.start_mark.index : axis.value[keep - 1].end_mark.index] + text[axis.value[-1].end_mark.index : axis.end_mark.index]
        if axis.end_mark.line == line:
            line_start = workflow.line_starts[line]
            line_end = sp.line_start(line + 1)
            line_text = text[line_start:line_end]
            rel_s, rel_e = axis.start_mark.index - line_start, axis.end_mark.index - line_start
            new_line = line_text[:rel_s] + new + _update_comment(line_text[rel_e:], reshard.from_count, keep)
            sp.replace(line_start, line_end, new_line)
        else:
            sp.replace(axis.start_mark.index, axis.end_mark.index, new)
    else:
        first = axis.value[keep].start_mark.line
        sp.delete_lines(first, last_line(axis, sp.lines))
        key_line = axis.start_mark.line - 1
        _replace_line(sp, key_line, _update_comment(sp.lines[key_line], reshard.from_count, keep))
    if reshard.flag == JOB_TOTAL:  # the count is the matrix's length: its list is all there is to change
        return
    pattern = re.compile(rf"({re.escape(reshard.flag)}[ =]){reshard.from_count}\b")
    hits = 0
    for step in job.steps:
        run = mapping_get(step.node, "run")
        if isinstance(run, yaml.ScalarNode) and pattern.search(run.value):
            src = text[run.start_mark.index : run.end_mark.index]
            new_src, count = pattern.subn(rf"\g<1>{keep}", src)
            hits += count
            sp.replace(run.start_mark.index, run.end_mark.index, new_src)
    if not hits:
        raise EditError(f"{workflow.path}: `{reshard.job}` has no `{reshard.flag} {reshard.from_count}` to change")


def _apply_partitions(sp: _Splicer, workflow: Workflow, job: JobDef, reshard: ReshardEdit) -> None:
    """A caller's shard count as JSON (`partitions: '{"size":14,"arr":[0,...,13]}'`) on fewer shards: `size`'s
    number and `arr`'s list changed where they are written, in whatever quotes or block; not a character more."""
    assert reshard.passed_as is not None
    node = mapping_get(mapping_get(job.node, "with"), reshard.passed_as)
    if not isinstance(node, yaml.ScalarNode):
        raise EditError(f"{workflow.path}: `{reshard.job}` passes no `{reshard.passed_as}` to change")
    start, end = node.start_mark.index, node.end_mark.index
    sp.replace(start, end, partitions_source(workflow.path, workflow.text[start:end], reshard))


#: In a scalar's source (quoted or a block), a JSON key as written: `"arr"`, or in double quotes `\"arr\"`.
_JSON_KEY = r'\\?"%s\\?"\s*:\s*'


def partitions_source(path: str, source: str, reshard: ReshardEdit) -> str:
    """The source of a shard count's JSON with `size`'s number and `arr`'s ids (0..n-1, their separator kept)
    on `to_count` shards. Each must be written once, with today's count; else EditError."""
    def one(pattern: str, what: str) -> re.Match[str]:
        found = list(re.finditer(pattern, source))
        if len(found) != 1:
            raise EditError(f"{path}: `{reshard.job}`'s `{reshard.passed_as}` holds {what} {len(found)} times, not once")
        return found[0]

    arr = one(_JSON_KEY % "arr" + r"\[([^\[\]]*)\]", "an `arr` list")
    ids = arr.group(1)
    between = re.search(r"\d(\s*,\s*)\d", ids)
    if re.findall(r"\d+", ids) != [str(i) for i in range(reshard.from_count)] or between is None:
        raise EditError(f"{path}: `{reshard.job}`'s `{reshard.passed_as}` does not list shards 0 to {reshard.from_count - 1}")
    lead, trail = re.match(r"\s*", ids).group(0), re.search(r"\s*$", ids).group(0)  # type: ignore[union-attr]
    edits = [(arr.start(1), arr.end(1), lead + between.group(1).join(map(str, range(reshard.to_count))) + trail)]
    if re.search(_JSON_KEY % "size", source):
        size = one(_JSON_KEY % "size" + r"(\d+)(?![\d.eE])", "a `size` number")
        if size.group(1) != str(reshard.from_count):
            raise EditError(f"{path}: `{reshard.job}`'s `{reshard.passed_as}` has `size` {size.group(1)}, not {reshard.from_count}")
        edits.append((size.start(1), size.end(1), str(reshard.to_count)))
    for begin, finish, text in sorted(edits, reverse=True):
        source = source[:begin] + text + source[finish:]
    return source


def _partitions_data(value: Any, reshard: ReshardEdit) -> Any:
    """What a shard count's JSON must hold on `to_count` shards, as data (`size` and `arr` set, the rest as it
    was): compared with the patched file's value, read as JSON (`_values_parsed`)."""
    data = json.loads(value)
    return {**data, "arr": list(range(reshard.to_count)), **({"size": reshard.to_count} if "size" in data else {})}


def _list_node(workflow: Workflow, edit: ListEdit) -> yaml.ScalarNode:
    """The literal block (`key: |`) that holds a list edit's shard list."""
    job = workflow.jobs.get(edit.writer)
    node = mapping_get(mapping_get(job.node, "with"), edit.key) if job is not None else None
    if not isinstance(node, yaml.ScalarNode) or node.style != "|":
        raise EditError(f"{workflow.path}: `{edit.writer}` has no `with: {edit.key}` written as a literal block (`|`)")
    return node


def _apply_list(sp: _Splicer, workflow: Workflow, edit: ListEdit) -> None:
    """Drop each trimmed configuration's lines past the new count and lower `num_shards` in the
    others. Each entry must stand on a line of its own: a list written otherwise is refused."""
    node = _list_node(workflow, edit)
    found: dict[ListTrimEdit, list[tuple[int, int]]] = {trim: [] for trim in edit.trims}  # trim -> (shard, line)
    for number in range(node.start_mark.line + 1, last_line(node, sp.lines) + 1):
        # (an entry of a block sequence, `- { ... }`, is one too)
        text = re.sub(r"^-[ \t]+", "", _text_of(sp.lines[number]).strip()).removesuffix(",").rstrip()
        if not (text.startswith("{") and text.endswith("}")) or "num_shards" not in text:
            continue
        try:
            entry = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError):  # (ValueError: a date that is none, an integer too long)
            continue
        for trim in edit.trims:
            if trim.holds(entry):
                found[trim].append((entry["shard"], number))
    for trim, lines in found.items():
        # each shard once, each on a line of its own
        if sorted(shard for shard, _ in lines) != list(range(1, trim.from_count + 1)) \
                or len({number for _, number in lines}) != trim.from_count:
            raise EditError(f"{workflow.path}: `{edit.writer}`'s `{edit.key}` does not list the {trim.from_count} shards "
                            f"of `{trim.config}` one per line")
        count = re.compile(rf"(\bnum_shards[\"']?\s*:\s*){trim.from_count}\b")
        for shard, number in lines:
            if shard > trim.to_count:
                sp.delete_lines(number, number)
                continue
            new, hits = count.subn(rf"\g<1>{trim.to_count}", sp.lines[number])
            if hits != 1:
                raise EditError(f"{workflow.path}: `{edit.writer}`'s `{edit.key}` says `num_shards` other than once "
                                f"on line {number + 1}")
            _replace_line(sp, number, new)


def _trimmed_list(value: Any, edit: ListEdit) -> Any:
    """A shard list's data with a list edit done: each trim's entries past its new count gone,
    `num_shards` the new count in the others."""
    include = value.get("include") if isinstance(value, dict) else None
    if not isinstance(include, list):
        return value
    kept = []
    for entry in include:
        trim = next((t for t in edit.trims if t.holds(entry)), None)
        if trim is None:
            kept.append(entry)
        elif entry["shard"] <= trim.to_count:
            kept.append({**entry, "num_shards": trim.to_count})
    return {**value, "include": kept}


def _parsed_list(workflow_path: str, text: Any) -> Any:
    """A shard list's text as the data it holds (what the workflow that reads it sees)."""
    try:
        return yaml.safe_load(text) if isinstance(text, str) else text
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise VerificationError(f"{workflow_path}: a shard list does not parse: {exc}") from None


def _values_parsed(path: str, data: dict[str, Any], change: LaneChange) -> dict[str, Any]:
    """The data with each shard list a list edit changes read as YAML, and each shard count a caller
    passes as JSON that a reshard changes read as JSON (copied where it changes)."""
    parsed = [(edit.writer, edit.key, functools.partial(_parsed_list, path)) for edit in change.lists] + \
             [(r.job, r.passed_as, _json_or_text) for r in change.reshards if r.passed_as is not None]
    if not parsed:
        return data
    jobs = dict(data.get("jobs") or {})
    for job_id, key, read in parsed:
        job = jobs.get(job_id)
        with_ = job.get("with") if isinstance(job, dict) else None
        if isinstance(with_, dict) and key in with_:
            jobs[job_id] = {**job, "with": {**with_, key: read(with_[key])}}
    return {**data, "jobs": jobs}


def _json_or_text(value: Any) -> Any:
    """A value read as JSON; as it is when it is none (the comparison then names it)."""
    try:
        return json.loads(value)
    except (TypeError, ValueError, RecursionError):
        return value


def _replace_line(sp: _Splicer, line: int, new: str) -> None:
    if new != sp.lines[line]:
        sp.replace(sp.line_start(line), sp.line_start(line + 1), new)


# --- what the result must be ---------------------------------------------------------------------

def _deep_copy(data: Any) -> Any:
    """A deep copy of plain data: its dicts and lists copied, strings, numbers,
    booleans and None shared (they are immutable)."""
    kind = type(data)
    if kind is dict:
        return {key: _deep_copy(value) for key, value in data.items()}
    if kind is list:
        return [_deep_copy(value) for value in data]
    return data


def expected_data(workflow: Workflow, change: LaneChange, config: RepoConfig) -> dict[str, Any]:
    """The original file's data with the change applied as data: what the patched
    text must parse to. Copied where it changes: `on` (its dispatch options), and a job on
    its first change; the other jobs are the original's own dicts (read, never changed)."""
    data = {**workflow.data, "on": _deep_copy(workflow.data.get("on"))} if "on" in workflow.data else dict(workflow.data)
    jobs = data["jobs"] = dict(workflow.data["jobs"])
    owned: set[str] = set()

    def own(job_id: str) -> Any:
        if job_id not in owned:
            jobs[job_id] = _deep_copy(jobs[job_id])
            owned.add(job_id)
        return jobs[job_id]

    removed: set[str] = set()
    inserted: dict[str, int] = {}  # host -> steps moved into it so far (a later suite's follow them)
    for fold in change.folds:
        suite = workflow.jobs[fold.suite]
        host = workflow.jobs[fold.host]
        moving, _ = suite.fold_steps(host, config.step_category)
        last_test = max(s.index for s in host.steps if config.step_category(s) == "test") + inserted.get(fold.host, 0)
        inserted[fold.host] = inserted.get(fold.host, 0) + len(moving)
        new_steps = []
        for step in moving:
            raw = _deep_copy(jobs[fold.suite]["steps"][step.index])
            raw["if"] = shard_condition(fold.shard_key, fold.shard_value, step.if_)
            raw["timeout-minutes"] = fold.timeout_minutes
            new_steps.append(raw)
        steps = own(fold.host)["steps"]
        jobs[fold.host]["steps"] = steps[: last_test + 1] + new_steps + steps[last_test + 1 :]
        removed.add(fold.suite)
    hosts = {fold.suite: fold.host for fold in change.folds}
    for job_id in removed:
        del jobs[job_id]
    for job_id, job in list(jobs.items()):
        needs = job.get("needs") if isinstance(job, dict) else None
        if isinstance(needs, str) and needs in removed:
            own(job_id)["needs"] = hosts[needs]
        elif isinstance(needs, list):
            original, kept = set(needs), []
            for need in needs:
                if need in hosts:
                    if hosts[need] in original or hosts[need] in kept:
                        continue
                    need = hosts[need]
                kept.append(need)
            if kept != needs:
                own(job_id)["needs"] = kept
    for options in option_lists(data):
        options[:] = [o for o in options if o not in removed]
    fewer = _fewer_jobs(change)
    for job_id, job in list(jobs.items()):
        for index, step in enumerate(job.get("steps") or [] if isinstance(job, dict) else []):
            spec = (step.get("with") or {}).get("jobs") if isinstance(step, dict) else None
            parsed = _parse_spec(spec)
            if parsed is None:
                continue
            step = own(job_id)["steps"][index]
            parsed = [e for e in parsed if e.get("prefix") not in removed]
            for entry in parsed:
                prefix = entry.get("prefix")
                less = sum(n for job_id, n in fewer.items() if isinstance(prefix, str) and job_id.startswith(prefix))
                if less and isinstance(entry.get("expected_count"), int):
                    entry["expected_count"] -= less
            step["with"]["jobs"] = parsed
    for reshard in change.reshards:
        job = own(reshard.job)
        if reshard.passed_as is not None:
            job["with"][reshard.passed_as] = _partitions_data(job["with"][reshard.passed_as], reshard)
            continue
        axis = job["strategy"]["matrix"][reshard.shard_key]
        job["strategy"]["matrix"][reshard.shard_key] = axis[: reshard.to_count]
        pattern = re.compile(rf"({re.escape(reshard.flag)}[ =]){reshard.from_count}\b")
        for step in job.get("steps") or [] if reshard.flag != JOB_TOTAL else ():
            if isinstance(step.get("run"), str):
                step["run"] = pattern.sub(rf"\g<1>{reshard.to_count}", step["run"])
    for listed in change.lists:  # (the list as data: `verify_edit` reads the patched text's list so too)
        with_ = own(listed.writer)["with"]
        with_[listed.key] = _trimmed_list(_parsed_list(workflow.path, with_[listed.key]), listed)
    return data


def option_lists(data: dict[str, Any]) -> Iterator[list[Any]]:
    """The `options:` lists of a workflow's dispatch and call inputs, as data (SGLang's
    `target_stage_select` lists its job ids)."""
    on = data.get("on")
    for trigger in ("workflow_dispatch", "workflow_call") if isinstance(on, dict) else ():
        spec = on.get(trigger)
        inputs = spec.get("inputs") if isinstance(spec, dict) else None
        for value in inputs.values() if isinstance(inputs, dict) else ():
            if isinstance(value, dict) and isinstance(value.get("options"), list):
                yield value["options"]


def _parse_spec(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, str) or '"prefix"' not in value:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, list) and all(isinstance(e, dict) for e in parsed) else None


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
    """The data with wait-for specs (`jobs:` inputs of steps) as parsed JSON, so they
    compare as JSON, not as text. Copies only what it changes."""
    jobs = data.get("jobs")
    if not isinstance(jobs, dict):
        return data
    new_jobs = dict(jobs)
    for job_id, job in jobs.items():
        steps = job.get("steps") if isinstance(job, dict) else None
        if not isinstance(steps, list):
            continue
        new_steps, changed = list(steps), False
        for index, step in enumerate(steps):
            with_ = step.get("with") if isinstance(step, dict) else None
            parsed = _parse_spec(with_.get("jobs")) if isinstance(with_, dict) else None
            if parsed is not None and isinstance(with_, dict):
                new_steps[index] = {**step, "with": {**with_, "jobs": parsed}}
                changed = True
        if changed:  # (not `new_steps != steps`: a deep comparison of every step)
            new_jobs[job_id] = {**job, "steps": new_steps}
    return {**data, "jobs": new_jobs}


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{path or '/'}: {type(a).__name__} became {type(b).__name__}"
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in b:
                return f"{path}/{key}: missing"
            if key not in a:
                return f"{path}/{key}: unexpected"
            diff = _first_difference(a[key], b[key], f"{path}/{key}")
            if diff:
                return diff
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries expected, {len(b)} found"
        for i, (x, y) in enumerate(zip(a, b)):
            diff = _first_difference(x, y, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if a == b else f"{path}: {_shown(a)} expected, {_shown(b)} found"


def _shown(value: Any, limit: int = 80) -> str:
    """A value for an error message: its repr, cut to `limit` characters (a shard list is a long string)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def verify_edit(workflow: Workflow, change: LaneChange, edit: FileEdit, config: RepoConfig) -> None:
    """Parse the patched text and check it is exactly the planned change and its job
    graph holds (every need exists, no cycle)."""
    try:
        actual = _patched_data(workflow, edit)
    except WorkflowError as exc:
        raise VerificationError(f"the patched file does not parse: {exc}") from None
    planned = workflow
    if workflow.text and not workflow.text.endswith(tuple(_BREAKS)) and edit.after.endswith(("\n", "\r")):
        # The file's last line had no line break, and now has one (a step put after it, or moved off it):
        # a block scalar that ended the file (`run: |` + `pytest host`) reads with its final newline now, as
        # it would have had the file ended as files do. The plan is the change to the file so ended.
        planned = parse_workflow(workflow.text + ("\r\n" if workflow.crlf else "\n"), workflow.path)
    expected = _normalise(expected_data(planned, change, config))
    actual = _normalise(_values_parsed(edit.path, actual, change))
    diff = None if expected == actual else _first_difference(expected, actual)
    if diff:
        raise VerificationError(f"{edit.path}: the patched file differs from the plan at {diff}")
    _check_graph(edit.path, actual)


def _patched_data(workflow: Workflow, edit: FileEdit) -> dict[str, Any]:
    """What the patched file parses to. Where the edit is the splices of the workflow's text
    and its nodes can be read one at a time (`Workflow.cuttable`), only what the splices touch
    is parsed again: each child of a block mapping or sequence that no splice touches stands as
    a placeholder, `<key>: 0` or `- 0`, in its place (so the children keep their order, and a
    repeated key is still one), and the data is the original's there (shared, as the original's
    is: not to be changed). A job the patch leaves alone is `<id>: 0`; of the job it folds a
    suite into, only the new steps and the two beside them are read, its other steps are `- 0`;
    of `on:`, only the options list a job leaves. That is the same data: a child's text parses to the same value
    wherever it stands in a block collection at its column (`child_spans`). What could reach
    across them makes the file be parsed whole: an anchor or alias in it (or one a patch writes:
    a node reached twice), a directive, odd line breaks, a placeholder that does not stand where
    it was put (a splice that opens a quote over it, or writes a block scalar that takes it); so
    does whatever does not parse so, for the error's line in the patched file."""
    reduced = _reduced(workflow, edit)
    if reduced is not None:
        text, held = reduced
        with contextlib.suppress(WorkflowError):
            root, data = compose_workflow(text, edit.path)
            if _put_back(root, data, held, set()) == len(held):
                return data
    return compose_workflow(edit.after, edit.path)[1]


def _put_back(node: yaml.Node, data: Any, held: dict[int, Any], seen: set[int]) -> int:
    """Put the original's value in place of each placeholder of the parsed reduced text (`held`:
    where each stands, its value), in the data parsed from it; how many stood where they were put,
    or -1 when a node is reached twice (an alias the patch wrote: its copies hold placeholders)."""
    if id(node) in seen:
        return -1
    seen.add(id(node))
    found = 0
    pairs = node.value if isinstance(node, yaml.MappingNode) else enumerate(node.value)
    for at, child in pairs:
        if isinstance(node, yaml.MappingNode):
            mark, at = at.start_mark.index, at.value
        else:
            mark = child.start_mark.index
        if type(child) is yaml.ScalarNode:
            if mark in held and child.value == "0" and not child.style:  # (plain: None, or "" from libyaml)
                data[at] = held[mark]
                found += 1
        else:
            count = _put_back(child, data[at], held, seen)
            if count < 0:
                return -1
            found += count
    return found


def _reduced(workflow: Workflow, edit: FileEdit) -> tuple[str, dict[int, Any]] | None:
    """The patched text with each child no splice touches as a placeholder (`_holds`), and
    where each placeholder's key (or item) stands in it, with the original's value; None when
    the file must be parsed whole (see `_patched_data`)."""
    splices = edit.splices
    if not splices or not workflow.cuttable or edit.before != workflow.text \
            or list(splices) != sorted(splices, key=_place) or any(a[1] > b[0] for a, b in zip(splices, splices[1:])) \
            or _splice(workflow.text, splices) != edit.after:
        return None
    # a directive or an odd line break the patch makes (written, or uncovered: `#%TAG` losing its `#`) changes
    # how the children left out read (an anchor or alias it makes is found after the parse)
    if directive(edit.after) or odd_lines(edit.after):
        return None
    holds: list[tuple[int, int, str, int, Any]] = []
    _holds(workflow, workflow.root, workflow.data, len(workflow.text), len(workflow.text),
           _Splices([s for s, _, _ in splices], [e for _, e, _ in splices]), holds)
    if not holds:
        return None
    cuts = sorted([*((s, e, new, None) for s, e, new in splices),
                   *((s, e, line, (at, value)) for s, e, line, at, value in holds)], key=lambda c: (c[0], c[1]))
    pieces: list[str] = []
    held: dict[int, Any] = {}
    size = pos = 0
    for start, end, new, hold in cuts:
        pieces.append(workflow.text[pos:start])
        size += start - pos
        if hold is not None:  # a child no splice touches
            held[size + hold[0]] = hold[1]
        pieces.append(new)
        size += len(new)
        pos = end
    pieces.append(workflow.text[pos:])
    return "".join(pieces), held


def _holds(workflow: Workflow, node: yaml.Node, data: Any, end: int, reach: int, splices: _Splices,
           out: list[tuple[int, int, str, int, Any]]) -> None:
    """Each child of `node` (a block collection whose text ends at `end`) that no splice touches,
    as (its text's start and end, its placeholder line, where the placeholder's key or item
    starts in that line, its value); and the same within each child a splice touches. A splice
    touches a child when it meets the child's text, or the indentation of the line after it (up
    to `reach` for the last child: a line put there, deeper than the next key, is taken by a block
    scalar that ends the child)."""
    spans = workflow.child_spans(node, end)
    if spans is None:
        return
    for i, span in enumerate(spans):
        after = spans[i + 1].start + spans[i + 1].column if i + 1 < len(spans) else reach
        # (the first splice that ends at or after the child's start: it touches the child if it starts by `after`)
        first = bisect.bisect_left(splices.ends, span.start)
        if first == len(splices.ends) or splices.starts[first] > after:
            out.append((span.start, span.end, span.placeholder, span.column + 2 if span.key is None else span.column,
                        data[i] if span.key is None else data[span.key]))
            continue
        child = node.value[i] if span.key is None else node.value[i][1]
        if isinstance(child, (yaml.MappingNode, yaml.SequenceNode)):
            _holds(workflow, child, data[i] if span.key is None else data[span.key], span.end, after, splices, out)


class _Splices(NamedTuple):
    """Where the splices of an edit (sorted, not overlapping) start and end, for bisection."""

    starts: list[int]
    ends: list[int]


def _place(splice: tuple[int, int, str]) -> tuple[int, int]:
    """Where a splice goes: two insertions at one place keep the order they were made in."""
    return splice[0], splice[1]


def _splice(text: str, ordered: list[tuple[int, int, str]] | tuple[tuple[int, int, str], ...]) -> str:
    """`text` with each (start, end, new) of `ordered` (sorted, not overlapping) done."""
    pieces, pos = [], 0
    for start, end, new in ordered:
        pieces += (text[pos:start], new)
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _check_graph(path: str, data: dict[str, Any]) -> None:
    jobs = data.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        raise VerificationError(f"{path}: the patched file has no jobs")
    needs: dict[str, list[str]] = {}
    for job_id, job in jobs.items():
        raw = job.get("needs") if isinstance(job, dict) else None
        needs[job_id] = [raw] if isinstance(raw, str) else [str(n) for n in raw] if isinstance(raw, list) else []
        for need in needs[job_id]:
            if need not in jobs:
                raise VerificationError(f"{path}: `{job_id}` needs `{need}`, which does not exist")
    done: set[str] = set()
    trail: list[str] = []  # the jobs being visited, each needing the next

    def visit(job_id: str) -> None:
        trail.append(job_id)
        for need in needs[job_id]:
            if need in trail:
                cycle = " → ".join(f"`{j}`" for j in [*trail[trail.index(need):], need])
                raise VerificationError(f"{path}: the jobs need each other in a cycle: {cycle}")
            if need not in done:
                visit(need)
        trail.pop()
        done.add(job_id)

    for job_id in jobs:
        if job_id not in done:
            visit(job_id)


# --- the patch -----------------------------------------------------------------------------------

def unified_diff(edits: list[FileEdit]) -> str:
    """One `git apply`-able unified diff over every changed file. The hunks are the
    splices themselves (with 3 lines of context), so the diff shows exactly what
    changed; difflib computes them for an edit made some other way."""
    chunks = []
    for edit in edits:
        if edit.before == edit.after:
            continue
        a = _before_lines(edit.before)
        b = _diff_lines(edit.after)
        opcodes = _splice_opcodes(edit, a, b) if edit.splices else None
        matcher = difflib.SequenceMatcher(None, a, b) if opcodes is None else _Opcodes(opcodes)
        body = [f"--- a/{edit.path}\n", f"+++ b/{edit.path}\n"]
        for group in matcher.get_grouped_opcodes(3):
            first, last = group[0], group[-1]
            body.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    body.extend(" " + line for line in a[i1:i2])
                    continue
                body.extend("-" + line for line in a[i1:i2])
                body.extend("+" + line for line in b[j1:j2])
        chunks.append(f"diff --git a/{edit.path} b/{edit.path}\n" + "".join(body))
    return "".join(chunks)


class _Opcodes(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """difflib's hunk grouping over opcodes we already know."""

    def __init__(self, opcodes: list[tuple[str, int, int, int, int]]) -> None:
        super().__init__(None, [], [])
        self.opcodes = opcodes

    def get_opcodes(self) -> list[Any]:
        return self.opcodes


def _range(start: int, stop: int) -> str:
    """A unified-diff range, as difflib writes it."""
    length = stop - start
    beginning = start + 1 if length else start
    return f"{beginning}" if length == 1 else f"{beginning},{length}"


def _splice_opcodes(edit: FileEdit, a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]] | None:
    """Line opcodes from character splices: each splice widened to whole lines,
    overlapping ones merged. None (let difflib do it) if they do not add up to `after`."""
    text = edit.before
    starts = list(itertools.accumulate(map(len, a), initial=0))
    if a and a[-1].endswith(_NO_NEWLINE):
        starts[-1] -= len(_NO_NEWLINE)  # the marker is not in the text
    total = len(starts) - 1

    def line_of(offset: int) -> int:
        return max(bisect.bisect_right(starts, offset) - 1, 0)

    groups: list[list[Any]] = []  # [first line, end line (exclusive), splices]
    for start, end, new in edit.splices:
        first = line_of(start)
        if end == start:
            last = first if start == starts[first] and (not new or new.endswith("\n")) else first + 1
        else:
            last = line_of(end - 1) + 1
        last = min(max(last, first), total)
        if groups and first < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], last)
            groups[-1][2].append((start, end, new))
        else:
            groups.append([first, last, [(start, end, new)]])
    opcodes: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    for first, last, splices in groups:
        region = text[starts[first]:starts[last]]
        for start, end, new in reversed(splices):
            region = region[: start - starts[first]] + new + region[end - starts[first]:]
        count = len(_git_lines(region))
        if first > i:
            opcodes.append(("equal", i, first, j, j + first - i))
            j += first - i
        if last - first or count:
            tag = "replace" if last - first and count else ("delete" if last - first else "insert")
            opcodes.append((tag, first, last, j, j + count))
        i, j = last, j + count
    if i < total:
        opcodes.append(("equal", i, total, j, j + total - i))
        j += total - i
    if j != len(b) or any(a[i1:i2] != b[j1:j2] for tag, i1, i2, j1, j2 in opcodes if tag == "equal"):
        return None
    return opcodes


_NO_NEWLINE = "\n\\ No newline at end of file\n"


@functools.lru_cache(maxsize=16)
def _before_lines(text: str) -> list[str]:
    """`_diff_lines` of a lane file as it is: the same for each patch of it (the whole patch,
    each suggestion's), so kept. Read, never changed."""
    return _diff_lines(text)


def _git_lines(text: str) -> list[str]:
    """`text`'s lines as git counts them: each ends at a "\n" (a CR, NEL or U+2028 is in its
    line; `str.splitlines` breaks there, and the patch was corrupt for `git apply`)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def _diff_lines(text: str) -> list[str]:
    lines = _git_lines(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += _NO_NEWLINE
    return lines


def patch_id(patch: str) -> str:
    return hashlib.sha256(patch.encode()).hexdigest()[:10]
