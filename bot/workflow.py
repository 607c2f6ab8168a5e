"""A GitHub Actions workflow file, parsed with source positions.

PyYAML's ``compose`` gives every node its start and end marks; we keep them so
that edits are surgical splices of the original text, leaving every comment and
blank line elsewhere untouched. libyaml's ``CSafeLoader`` keeps the same marks at
a tenth of the pure-Python cost (after a BOM that starts the text, one character
on: `_count_the_bom`).

Everything here is pure: text in, values out.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import yaml

#: The safe resolver, memoised at C speed: a workflow repeats the same few keys and
#: values thousands of times, and resolving a plain scalar means trying regexes.
#: (All 63 SGLang files together hold 2,070 distinct scalars, 0.3 MB of text; the
#: bound keeps a server reading many repositories to a few MB.)
_resolve = functools.lru_cache(maxsize=16_384)(yaml.resolver.Resolver().resolve)


class _LeanResolver(yaml.resolver.Resolver):
    """The safe resolver without per-node Python calls: tags come from the memo, and
    path resolvers (never registered here) are not consulted on the way down and up."""

    resolve = staticmethod(_resolve)
    descend_resolver: Any = staticmethod({}.get)  # (parent, index) -> None
    ascend_resolver = staticmethod(tuple)  # () -> ()


try:  # libyaml is optional at install time; the pure parser gives the same marks (but see _MARKS_SKIP_A_BOM).
    from yaml.cyaml import CParser as _CParser

    class _Loader(_CParser, _LeanResolver):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _LeanResolver.__init__(self)
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    class _Loader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,  # type: ignore[no-redef]
                  _LeanResolver):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            _LeanResolver.__init__(self)

#: GitHub's job-level default for ``timeout-minutes``.
DEFAULT_JOB_TIMEOUT_MINUTES = 360
#: A reshard's `flag` when the test step's count follows the matrix itself (`--num-shards=${{ strategy.job-total
#: }}`): the matrix's list is all a reshard changes.
JOB_TOTAL = "strategy.job-total"

_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def expression_end(text: str) -> int:
    """Where `_EXPR`'s search of `text` may stop: after its last `}}` (0 without one). A `${{` with no `}}` after it
    is text, and the pattern's lazy `.*?` reads the rest of the text for it, for each one: n of them read n^2/2
    characters (review150 c03: `${{` 21,000 times, 64 KB, took 9 s). Searched up to here, each `${{` finds its
    `}}` and the search goes on past it: the text is read once."""
    at = text.rfind("}}")
    return at + 2 if at >= 0 else 0


def expression_parts(name: str) -> tuple[str, ...]:
    """The text of a name as written around its expressions (`Run export GPU=${{ matrix.gpu }}`: `Run export GPU=`
    and ``), which GitHub shows with their values; one part where it has none (an unclosed `${{` is text)."""
    end = expression_end(name)
    parts = _EXPR.split(name[:end])[::2]
    parts[-1] += name[end:]
    return tuple(parts)


def fills(parts: tuple[str, ...], name: str) -> bool:
    """Whether `name`, as GitHub shows it, is the name `parts` came from (`expression_parts`) with a value in each
    expression's place, any text. Read left to right with `str.find`, not with a pattern of `.*`s, whose tries grow
    as a power of the name's length."""
    if len(parts) == 1:
        return name == parts[0]
    first, *middle, last = parts
    if not name.startswith(first) or not name.endswith(last) or len(name) < len(first) + len(last):
        return False
    at, end = len(first), len(name) - len(last)
    for part in middle:
        at = name.find(part, at, end)
        if at < 0:
            return False
        at += len(part)
    return True


class WorkflowError(ValueError):
    """A workflow file that cannot be analysed; the message names file and line."""


_STR_TAG = "tag:yaml.org,2002:str"
_Scalar, _Mapping, _Sequence = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode


def to_python(node: yaml.Node, read: dict[int, tuple[Any, int]] | None = None) -> Any:
    """Plain Python value of a node. Mapping keys are always strings, as GitHub
    reads them (YAML 1.1 would turn the key ``on`` into ``True``). A collection that
    aliases name is read once and shared, as PyYAML's own loader does (`read`: each
    collection's value and how many values it holds with its aliases read out)."""
    return _read(node, {} if read is None else read)[0]


def _read(node: yaml.Node, read: dict[int, tuple[Any, int]]) -> tuple[Any, int]:
    """`to_python`'s value of a node, and how many values it holds, aliases read out."""
    kind = type(node)
    if kind is _Scalar:
        return (node.value if node.tag == _STR_TAG else _scalar(node)), 1 + len(node.value) // TEXT_PER_VALUE
    done = read.get(id(node))
    if done is not None:
        return done
    if kind is _Mapping:
        mapping, size = {}, 1 + len(node.value)  # (itself and its keys)
        for k, v in node.value:
            if type(v) is _Scalar:  # (most values: read here, not in a call of their own)
                mapping[k.value if type(k) is _Scalar else _key(k)] = v.value if v.tag == _STR_TAG else _scalar(v)
                size += 1 + len(v.value) // TEXT_PER_VALUE
            else:
                mapping[k.value if type(k) is _Scalar else _key(k)], count = _read(v, read)
                size += count
        if len(mapping) != len(node.value):
            _duplicate_key(node)
        read[id(node)] = (mapping, size)
        return mapping, size
    if kind is _Sequence:
        items, size = [], 1
        for v in node.value:
            if type(v) is _Scalar:
                items.append(v.value if v.tag == _STR_TAG else _scalar(v))
                size += 1 + len(v.value) // TEXT_PER_VALUE
            else:
                value, count = _read(v, read)
                items.append(value)
                size += count
        read[id(node)] = (items, size)
        return items, size
    raise WorkflowError(f"line {node.start_mark.line + 1}: unexpected {kind.__name__}")


#: The most values a workflow file may hold once its aliases are read out (SGLang's longest lane file,
#: 2,400 lines, holds ~3,000): nine aliases of nine, nine deep, are 387 million (and minutes of work).
#: A long text counts as one value per `TEXT_PER_VALUE` characters: 300 aliases of one 1 MB string
#: were 300 MB read out (the schema check's messages quote the values it refuses: 1.25 GB, 9 s).
MAX_VALUES = 200_000
TEXT_PER_VALUE = 64


def _duplicate_key(node: yaml.MappingNode) -> None:
    """GitHub rejects a mapping that repeats a key ("'x' is already defined")."""
    seen: set[str] = set()
    for k, _ in node.value:
        if k.value in seen:
            raise WorkflowError(f"line {k.start_mark.line + 1}: `{k.value}` is already defined in this mapping")
        seen.add(k.value)


def _key(node: yaml.Node) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise WorkflowError(f"line {node.start_mark.line + 1}: a mapping key must be a plain value")
    return node.value


def _scalar(node: yaml.ScalarNode) -> Any:
    tag, value = node.tag, node.value
    if tag.endswith(":null"):
        return None
    if tag.endswith(":bool"):
        return value.lower() in ("true", "yes", "on", "y")
    if tag.endswith(":int"):
        try:
            return int(value.replace("_", ""), 0)
        except ValueError:
            return value
    if tag.endswith(":float"):
        try:
            return float(value.replace("_", ""))
        except ValueError:
            return value
    return value


def mapping_get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node under ``key`` of a mapping node, or None."""
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def mapping_item(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    return None


class JobSteps(list["StepDef"]):
    """A job's steps as read (`StepDef.siblings`), and what a config made of them, kept with them: the
    categories of the last config that read them (`bot.config.RepoConfig.job_categories`)."""

    categories: tuple[Any, int, int, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class StepDef:
    """One step of a job as written."""

    index: int
    name: str  # as GitHub displays it: `name`, else "Run <uses>" / "Run <first run line>"
    explicit_name: str | None
    uses: str | None
    run: str | None
    with_: Any
    env: Any
    if_: str | None
    timeout_minutes: Any
    node: yaml.MappingNode = field(repr=False, compare=False)
    step_id: str | None = None  # its `id:`
    raw: Any = field(default=None, repr=False, compare=False)  # the step as written (its plain data)
    #: the steps of its job, itself among them (filled as the job is read): where its place tells what it is. (A
    #: reference each way: every parsed workflow is a cycle for the collector, ~2-4 ms of a 42 ms analysis where
    #: it collects during one; a weak one lost the place of steps kept without their workflow, silently.)
    siblings: Sequence[StepDef] = field(default=(), repr=False, compare=False)

    @functools.cached_property
    def unspoken(self) -> str:
        """Of a `run:` step whose name may not speak for its script, how: of an unnamed one, which GitHub names by
        its first line, the kind of that line when it does not speak for the script, "" when it does. A banner
        (`echo`, `printf`; not one that writes, `>> $GITHUB_ENV`) speaks for prints and shell set-up alone ("print": `echo
        "Running unit tests"`, then `cd tests && pytest`); an install for installs and the look at what
        they put in place ("install": not `pip install -e .`, then `python3 run_suite.py`); shell set-up
        (`set -ex`, `export VAR=...`, `cd build`, `source venv/bin/activate`) for nothing but more of it and prints
        ("shell": not `set -ex`, then `pytest tests`); a look (`ls -la /dev/dri`) where the script only looks
        (`looks_only`: "look", its place in the job tells what it is where no rule takes its name). A command
        continued with a backslash is one; a filter after `|` and text in quotes are no commands. Of a named
        one, "named" where its commands say what it does (`_commands_say`) or only look, else "": its name speaks
        for it where a rule takes it, and where none does (kernelbot's `Run script`, then `pytest
        scripts/ci_test_cuda.py`), they do, not "other"."""
        if self.uses is not None or not self.run:
            return ""
        if self.explicit_name is not None:
            return "named" if self._commands_say or self.looks_only else ""
        lines, commands, tests = self._commands
        if not lines:
            return ""
        if _PRINTS.match(lines[0]) and ">" not in lines[0] and "GITHUB_" not in lines[0]:
            return "print" if tests or any(not _PRINTS.match(command) and not _SHELL.match(command)
                                           for command in commands) else ""
        if _INSTALLS.match(lines[0]):  # (its tests, run by `env` or after a pipe, are no look at an install)
            return "install" if tests or any(not _INSTALLS.match(command) and not _SHELL.match(command)
                                             and not _PRINTS.match(command) and not _LOOKS.match(command)
                                             for command in commands) else ""
        if _SHELL.match(lines[0]):
            return "shell" if tests or any(not _SHELL.match(command) and not _PRINTS.match(command)
                                           for command in commands) else ""
        return "look" if _LOOKS.match(lines[0]) and self.looks_only else ""

    @functools.cached_property
    def looks_only(self) -> bool:
        """Whether a `run:` step's commands only look at the machine and its files, or fetch, copy and remove them
        (`_LOOKS`: `rocminfo`, `ls /dev/dri`, `rm -rf ~/.triton/cache`), besides prints and shell set-up, and pipe
        only into filters (`ls | grep x`; not `ls configs/*.yaml | xargs python3 bench.py`, review151 c02): what a
        job runs before its tests to ready or check the machine, and after them to gather or clean up. Its place
        in the job tells which (`bot.config.RepoConfig.step_category`, `bot.timing.JobMatcher.script_steps`)."""
        lines, commands, tests = self._commands
        if tests or not all(_pipes_into_filters(part) for line in lines
                            for part in re.split(r"&&|\|\||;", _QUOTED.sub("''", line))):
            return False
        looks = [_only_looks(command) for command in commands]
        return any(looks) and all(look or _PRINTS.match(command) or _SHELL.match(command)
                                  for look, command in zip(looks, commands))

    @functools.cached_property
    def _commands(self) -> tuple[list[str], list[str], bool]:
        """Its script's lines (a command continued with a backslash joined into one; no blank line, no
        comment), and its commands: each line's, quotes emptied, split at `&&`, `||` and `;`, each up to a
        `|` (what it pipes into filters its output), less a shell keyword before it (`then pip ...`); and
        whether one of them, or what one pipes into (`ls tests/*.py | xargs pytest`), runs tests."""
        lines: list[str] = []
        continued = False
        for line in (self.run or "").splitlines():
            text = line.strip()
            if not text or text.startswith("#"):
                continued = False
                continue
            if continued:
                lines[-1] = lines[-1][:-1] + " " + text
            else:
                lines.append(text)
            continued = text.endswith("\\")
        parts = [part for line in lines for part in re.split(r"&&|\|\||;", _QUOTED.sub("''", line))]
        commands = [command for part in parts if (command := _KEYWORD.sub("", part.split("|")[0].strip()).strip())]
        return lines, commands, any(runs_tests(part) for part in parts)

    @functools.cached_property
    def said(self) -> str:
        """Of a `run:` step whose name does not speak for its script (`unspoken`: a first line that does not, or a
        name that no rule may take), what its commands say (`_commands_say`), for a name no rule takes; else ""."""
        return self._commands_say if self.unspoken else ""

    @functools.cached_property
    def _commands_say(self) -> str:
        """What a `run:` step's commands say it does: "test" when one runs tests (`RUNS_TESTS`), as a name that
        says it installs and then tests is one (`COMBINED_TEST`: the setup in it is said under "Could not
        measure"); "setup" when they install (an uninstall alone is a clean-up), and besides only look at what
        was installed, print and set up the shell (`echo "::group::Install"`, then `pip install -e .`); else ""
        (a banner, then a look at the logs and a tarball of them, is what runs after the tests too)."""
        _, commands, tests = self._commands
        if tests:
            return "test"
        if any(_INSTALLS.match(command) and "uninstall" not in command for command in commands) and all(
                _INSTALLS.match(command) or _LOOKS.match(command) or _PRINTS.match(command) or _SHELL.match(command)
                for command in commands):  # (looks, copies and prints alone: what runs after the tests, too)
            return "setup"
        return ""

    @functools.cached_property
    def identity(self) -> tuple[Any, ...]:
        """What makes two steps 'the same step': what they run, with what, in what environment
        and when (a setup step that starts another image through its `env:` is another step)."""
        run = "\n".join(line.rstrip() for line in (self.run or "").strip().splitlines())
        raw = self.raw if isinstance(self.raw, dict) else {}
        when = " ".join(str(self.if_).split()) if self.if_ is not None else None
        return (self.uses, run, _freeze(self.with_), _freeze(self.env), _freeze(raw.get("shell")),
                _freeze(raw.get("working-directory")), when)

    def contexts(self, name: str) -> list[str]:
        """The keys of context `name` its expressions read (`context_keys`): every value of the
        step is looked at, its `if:` as the expression it is without `${{ }}`."""
        return context_keys(tree_expressions(self.raw), name)


def _unlike(a: StepDef, b: StepDef) -> str:
    """What of two steps' identities differs, in words: `` `with.name`, `run` ``."""
    keys = ("uses", "run", "with", "env", "shell", "working-directory", "if")
    differ = []
    for key, x, y in zip(keys, a.identity, b.identity):
        if x == y:
            continue
        if key in ("with", "env") and all(isinstance(v, tuple) and all(isinstance(i, tuple) and len(i) == 2 for i in v)
                                          for v in (x, y)):
            left, right = dict(x), dict(y)
            differ += [f"`{key}.{k}`" for k in sorted(set(left) | set(right), key=str) if left.get(k) != right.get(k)]
        else:
            differ.append(f"`{key}`")
    return ", ".join(differ) or "their identities"


@functools.lru_cache(maxsize=16)
def _context_pattern(name: str) -> re.Pattern[str]:
    # (a key that is not written out, `matrix[env.AXIS]`, may be any: the whole context)
    return re.compile(rf"(?<![\w.-]){name}\s*(?:\.\s*([a-z_][\w-]*)|\[\s*['\"]([^'\"]*)['\"]\s*\]|(?![\w.-]))",
                      re.I)


def context_keys(expressions: list[str], name: str) -> list[str]:
    """The keys of context `name` (`matrix`, `needs`, `steps`, ...) the expressions read
    (`matrix.gpu`, `matrix['gpu']`: "gpu"; the whole context, as in `toJSON(matrix)`: ""), in
    order, once each, lower-case (expressions ignore case)."""
    pattern = _context_pattern(name)
    return list(dict.fromkeys((m.group(1) or m.group(2) or "").lower() for text in expressions
                              for m in pattern.finditer(text)))


def tree_expressions(node: Any) -> list[str]:
    """The expressions of a YAML tree (a step, a job, a trigger), in order: what each `${{ }}`
    of its values holds, and each `if:` that is an expression without them."""
    if isinstance(node, str):
        return _EXPR.findall(node, 0, expression_end(node)) if "${{" in node else []
    if isinstance(node, dict):
        found: list[str] = []
        for key, value in node.items():
            if key == "if" and isinstance(value, str) and "${{" not in value:
                found.append(value)
            else:
                found += tree_expressions(value)
        return found
    if isinstance(node, list):
        return [text for item in node for text in tree_expressions(item)]
    return []


def strings(node: Any) -> list[str]:
    """Every string value in a YAML tree, in order (not the keys); a value that aliases share is
    read once (nine aliases of nine, nine deep, are 9**9 strings read the other way)."""
    out: list[str] = []
    seen: set[int] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, (dict, list)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(reversed(list(item.values()) if isinstance(item, dict) else item))
    return out


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class JobDef:
    """One job as written in a workflow file."""

    id: str
    name_template: str | None
    needs: tuple[str, ...]
    if_: str | None
    runs_on: Any
    matrix: dict[str, Any] | None  # the `strategy.matrix` mapping, raw
    max_parallel: int | None
    timeout_minutes: Any
    uses: str | None  # a reusable-workflow call
    steps: tuple[StepDef, ...]
    key_node: yaml.ScalarNode = field(repr=False, compare=False)
    node: yaml.MappingNode = field(repr=False, compare=False)
    #: What of the matrix an expression gives (`${{ fromJSON(...) }}`): "its matrix", "its matrix
    #: axis `folder`", ...; its jobs are known only when a run starts. None: all of it is written out.
    matrix_expression: str | None = None

    def fold_steps(self, host: "JobDef", category: Callable[[StepDef], str]) -> tuple[list[StepDef], str | None]:
        """The steps a fold of this suite moves into `host` (placed after the host's last test
        step): all but its setup; of the steps after its last test (its teardown), those the
        host runs alike after its own tests are left to the host. And why it cannot fold
        (None: it can): a teardown step the host has not, where the host has steps of its own
        after its tests (before them it undoes what they need, after them it misses a failure)."""
        tests = [s.index for s in self.steps if category(s) == "test"]
        host_tests = [s.index for s in host.steps if category(s) == "test"]
        host_after = [s for s in host.steps if host_tests and s.index > host_tests[-1]]
        alike = {s.identity for s in host_after}
        if not tests and host_after:  # its teardown cannot be told from its tests
            return [s for s in self.steps if category(s) != "setup"], (
                "the suite has no step named as a test, so what of it is teardown cannot be told, and the host has "
                f"steps of its own after its tests (`{host_after[0].name}`, ...)")
        moving = []
        for step in self.steps:
            if category(step) == "setup":
                continue
            if tests and step.index > tests[-1]:
                if step.identity in alike:
                    continue
                if host_after:
                    namesake = next((s for s in host_after if s.name == step.name), None)
                    if namesake is not None:  # (named alike, so say what is not)
                        return moving, (f"the suite's step `{step.name}` after its tests is not the host's step of "
                                        f"that name: {_unlike(step, namesake)} differ")
                    return moving, (f"the suite's step `{step.name}` after its tests has no like among the host's "
                                    f"steps after its own (`{host_after[0].name}`, ...)")
            moving.append(step)
        return moving, None

    @property
    def matrix_axes(self) -> dict[str, list[Any]]:
        """The list-valued axes of the matrix (``include``/``exclude`` left out)."""
        if not isinstance(self.matrix, dict):
            return {}
        return {k: v for k, v in self.matrix.items() if isinstance(v, list) and k not in ("include", "exclude")}

    @property
    def one_combination(self) -> dict[str, Any] | None:
        """The matrix values of a job whose matrix makes one job: axes of one value each, or one
        `include` entry and no axis (ROCm's `include: [{runner: ...}]`); {} without a matrix.
        None when it makes several, excludes some, or an expression gives it."""
        if self.matrix_expression:
            return None
        if not isinstance(self.matrix, dict):
            return {}
        axes = self.matrix_axes
        include = self.matrix.get("include")
        if self.matrix.get("exclude") or any(len(values) != 1 for values in axes.values()):
            return None
        if not include:
            return {k: values[0] for k, values in axes.items()}
        if axes or not isinstance(include, list) or len(include) != 1 or not isinstance(include[0], dict):
            return None
        return dict(include[0])

    @property
    def shard_count(self) -> int:
        """How many jobs the matrix expands to (1 without a matrix)."""
        if not isinstance(self.matrix, dict):
            return 1
        axes = self.matrix_axes
        include = self.matrix.get("include")
        exclude = self.matrix.get("exclude")
        if not axes:
            return len(include) if isinstance(include, list) and include else 1
        count = 1
        for values in axes.values():
            count *= len(values)
        if isinstance(exclude, list):
            count -= len(exclude)
        return max(count, 0)


class Span(NamedTuple):
    """A child of a block collection in its file's text: from the start of the line its key
    (or its item's dash) begins to the start of the next child's; the key's (the dash's) column;
    the key (None for an item of a sequence)."""

    start: int
    end: int
    column: int
    key: str | None

    @property
    def placeholder(self) -> str:
        """The line that stands for it where its text is left out: `<key>: 0`, `- 0`."""
        return f"{' ' * self.column}{'- ' if self.key is None else self.key + ': '}0\n"


def shard_entry(entry: Any) -> tuple[str, int, int, str | None] | None:
    """An entry of a shard list written out for a matrix (pytorch's `test-matrix`: `{ config:
    "default", shard: 1, num_shards: 6, runner: "..." }`) as (config, shard, count, runner); None
    for anything else. Scalars only, compared as text: an alias nested deep or wide is no
    configuration (and would take long to print)."""
    if not isinstance(entry, dict):
        return None
    config, shard, count, runner = (entry.get(k) for k in ("config", "shard", "num_shards", "runner"))
    if type(shard) is int and type(count) is int and type(config) in (str, int) and type(runner) in (str, int, type(None)):
        return str(config), shard, count, None if runner is None else str(runner)
    return None


@dataclass(frozen=True)
class Workflow:
    """A parsed workflow file: its text, its nodes with positions, its plain data."""

    path: str
    text: str
    root: yaml.MappingNode = field(repr=False, compare=False)
    data: dict[str, Any] = field(repr=False, compare=False)
    jobs: dict[str, JobDef] = field(repr=False, compare=False)

    @functools.cached_property
    def derived(self) -> dict[str, Any]:
        """What other modules derive from the file once and keep as long as it (`plan.passed_runners`)."""
        return {}

    @functools.cached_property
    def line_starts(self) -> tuple[int, ...]:
        """Offsets where lines start, as YAML counts lines (the parser's marks give line numbers):
        after every "\\n", and after a lone CR, NEL, U+2028 or U+2029 in a text that has one
        (only edits need them, so read on demand)."""
        if self.odd:
            return (0, *(m.end() for m in _YAML_BREAK.finditer(self.text)))
        return tuple(itertools.accumulate(map((1).__add__, map(len, self.text.split("\n"))), initial=0))[:-1]

    @functools.cached_property
    def lines(self) -> list[str]:
        """Its lines as YAML counts them, line ends kept (read once; no caller changes them)."""
        if self.odd:
            starts = self.line_starts
            return [self.text[a:b] for a, b in zip(starts, (*starts[1:], len(self.text))) if a < len(self.text)]
        return self.text.splitlines(keepends=True)

    @functools.cached_property
    def odd(self) -> bool:
        """Whether its lines differ between YAML, "\\n" and `str.splitlines` (`odd_lines`)."""
        return odd_lines(self.text)

    @functools.cached_property
    def input_values(self) -> dict[str, tuple[str, ...]]:
        """The values the file gives each of its dispatch and call inputs, by the input's name in
        lower case (GitHub's contexts are not case-sensitive): its default and its options, the
        strings among them (`runs-on: ${{ inputs.runner }}` may run on one of them)."""
        on = self.data.get("on") if isinstance(self.data, dict) else None
        values: dict[str, tuple[str, ...]] = {}
        for trigger in ("workflow_dispatch", "workflow_call") if isinstance(on, dict) else ():
            inputs = on.get(trigger).get("inputs") if isinstance(on.get(trigger), dict) else None
            for name, spec in inputs.items() if isinstance(inputs, dict) else ():
                if not isinstance(spec, dict):
                    continue
                options = spec.get("options") if isinstance(spec.get("options"), list) else []
                given = [v for v in (spec.get("default"), *options) if isinstance(v, str) and v.strip()]
                key = str(name).lower()
                values[key] = tuple(dict.fromkeys((*values.get(key, ()), *given)))
        return values

    @functools.cached_property
    def crlf(self) -> bool:
        """Whether its lines end in CRLF (a file saved on Windows): what is inserted ends so too."""
        crlf = self.text.count("\r\n")
        return crlf > self.text.count("\n") - crlf

    def child_spans(self, node: yaml.Node, end: int) -> list["Span"] | None:
        """`child_spans` of one of its nodes, each found once (the patch checks of a lane share them)."""
        key = (id(node), end)
        if key not in self._spans:
            self._spans[key] = child_spans(self.text, node, end)
        return self._spans[key]

    @functools.cached_property
    def _spans(self) -> dict[tuple[int, int], list["Span"] | None]:
        return {}

    @functools.cached_property
    def cuttable(self) -> bool:
        """Whether each node's text may be read apart from the rest of the file (`child_spans`):
        no anchor or alias (a node shared between two places; an anchor a patch writes again), no
        directive (a tag in one node may depend on it), no line breaks YAML counts and "\\n"
        does not."""
        return not (self.odd or directive(self.text) or may_share_nodes(self.text, self.root))

    @property
    def name(self) -> str:
        return str(self.data.get("name") or self.path)

    @property
    def jobs_node(self) -> yaml.MappingNode:
        node = mapping_get(self.root, "jobs")
        assert isinstance(node, yaml.MappingNode)
        return node

    def on_node(self) -> yaml.Node | None:
        return mapping_get(self.root, "on")

    @property
    def triggers(self) -> list[str]:
        """The events of its `on:` (a string, a list or a mapping of them)."""
        on = self.data.get("on") if isinstance(self.data, dict) else None
        return [on] if isinstance(on, str) else [str(event) for event in on] if isinstance(on, (list, dict)) else []

    @property
    def undispatchable(self) -> str | None:
        """What the file lacks for `/dispatch` to run it (`no ...`), or None: a dispatch names the
        jobs to run in the `target_stage` (or `target_stage_select`) input of its
        `workflow_dispatch` trigger (`bot.dispatch.HOW_DISPATCHED`)."""
        if "workflow_dispatch" not in self.triggers:
            return "no `workflow_dispatch` trigger"
        inputs = self.dispatch_inputs()
        if "target_stage" not in inputs and "target_stage_select" not in inputs:
            return "no `target_stage` (or `target_stage_select`) input under `workflow_dispatch`"
        return None

    def dispatch_inputs(self) -> dict[str, Any]:
        on = self.data.get("on")
        if isinstance(on, dict):
            dispatch = on.get("workflow_dispatch") or {}
            if isinstance(dispatch, dict):
                return dict(dispatch.get("inputs") or {})
        return {}

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line] + col


#: A command of a script that installs (pip, uv, conda, a system package manager), after `sudo` and
#: variables set for it; one that prints (echo, printf); one that only sets up the shell.
_INSTALLS = re.compile(r"(?:sudo(?:\s+-\S+)*\s+)?(?:\w+=\S*\s+)*(?:python[\d.]*\s+-m\s+)?(?:pip[\d.]*|uv\s+pip|conda"
                       r"|mamba|micromamba|apt(?:-get)?|yum|dnf)\s+(?:-\S+\s+)*(?:un)?install\b")
_PRINTS = re.compile(r"(?:echo|printf)\b")
#: A word that starts a wrapper (`_RUN_BY`): never an option's argument or a duration, so that the engine has one way
#: to read `sudo -E sudo -E ...` (with both, it tried 2^n: a 177-character command took seconds).
_WRAPPER = (r"(?!(?:env|time|timeout|sudo|mpirun|mpiexec|srun|torchrun|xargs|docker|coverage|uv|poetry|pipenv"
            r"|pytest|py\.test|unittest|lit|ctest|tox|nox|make|ninja|cmake)\b"  # (nor a runner: review147 z01, its
            r"|python[\d.]*[ \t]+-m[ \t]+torch\.distributed\."  # look at the rest of the command, read once; nor
            r"|(?:bash[ \t]+)?\S*amd_ci_exec\.sh(?!\S))")  # SGLang's wrapper: review149 b01, 2^n, 340 characters 10 s)
#: An option, with the argument it may take (`-np 8`, `-u ci`, `-s KILL`).
_OPTION = r"[ \t]+-\S+(?:[ \t]+" + _WRAPPER + r"[^-\s]\S*)?"
#: docker's options that take no word (`docker run --rm img cat ./tests/test_x.py` looks at a file: `img` is no
#: argument of `--rm`).
_DOCKER_FLAG = r"[ \t]+(?:--(?:rm|privileged|init|detach|interactive|tty|read-only)|-[itd]+)(?!\S)"
#: What runs a command before it: variables set for it, and a wrapper that runs it (`env X=1`, `timeout -s KILL 3600`,
#: `sudo -E`, `time`, `coverage run -m`, `uv run`, `poetry run`, `mpirun -np 8`, `torchrun --nproc_per_node 8 -m`,
#: `python -m torch.distributed.run`, `docker exec -w /src ci`, `docker run --rm -v a:b img`, `xargs -n1` after a pipe,
#: SGLang's `bash scripts/ci/amd/amd_ci_exec.sh -w /sglang-checkout/test`).
_RUN_BY = (r"[ \t]*(?:\w+=\S*[ \t]+)*(?:(?:env(?:[ \t]+-\S+)*(?:[ \t]+\w+=\S*)*|time"
           r"|coverage[ \t]+run(?:[ \t]+-m)?|(?:uv|poetry|pipenv)[ \t]+run"
           r"|timeout(?:" + _OPTION + r")*[ \t]+" + _WRAPPER + r"[^-\s]\S*"
           r"|sudo(?:[ \t]+(?:(?:-[^\s-]*[ugCDhprtUT]|--(?:user|group|chdir|close-from|host|prompt|role|type|other-user"
           r"|command-timeout))[ \t]+" + _WRAPPER + r"[^-\s]\S*|-\S+))*"  # (only these of sudo's options take a word:
           # `sudo -E ldd ./build/test/unit_tests` looks at the binary)
           r"|(?:mpirun|mpiexec|srun|torchrun|xargs|python[\d.]*[ \t]+-m[ \t]+torch\.distributed\.(?:run|launch))"
           r"(?:" + _OPTION + r")*"
           r"|docker[ \t]+(?:exec|run)(?:" + _DOCKER_FLAG + r"|(?!" + _DOCKER_FLAG + r")" + _OPTION + r")*[ \t]+"
           + _WRAPPER + r"[^-\s]\S*"
           r"|(?:bash[ \t]+)?(?!-)(?:(?!=)\S)*amd_ci_exec\.sh(?:" + _OPTION + r")*)[ \t]+)*")
#: What a script named for the tests does for them, not to run them (`download_test_data.sh`, `install_test_deps.sh`):
#: no tests script or tests file, for the patterns below.
_SETS_UP = r"install|deps?\b|setup|prepare|download|fetch|pull|upload|image|asset|weight"
#: ... and what a helper named for the tests does with them (pytorch's `tools/testing/update_slow_tests.py`,
#: `generate_tests.py`, `select_tests.py`): no tests file.
_HANDLES = (r"(?<![a-z0-9])(?:update|generat\w*|gen|select|build|collect|list|parse|check|filter|split|shard|find"
            r"|discover|compare|report|summari[sz]e|merge|clean|sort|count|print|dump)(?:_\w*)?_tests?\.py")
#: A linter's target or session (`check-format`, `tox -e typing`), no test run.
_LINTS = (r"lint\w*|format\w*|docs?\b|typ\w*|mypy|pylint|pep8|flake8|style|codestyle|codespell|spell\w*|pre-?commit|ruff"
          r"|black|isort|shellcheck|clang-(?:format|tidy)|tidy|copyright|licen[cs]e|headers?\b")
#: A target that runs tests: `test`, `check`, `test-unit`, `check-mlir`; not `test-deps`, `test-install`, `test-image`,
#: nor `check-format`, `check-lint`, `check-types` (a linter's), nor `tests`, which in most projects builds them.
_TEST_TARGET = (r"(?:test|check)(?:-(?!deps?\b|install|setup|prepare|image|build|pull|" + _LINTS + r")\w[\w-]*)?"
                r"(?![\w./-])")
#: A command that runs tests, after what runs it (`_RUN_BY`): pytest, unittest, lit, ctest, tox, nox, `bazel test`,
#: `make` or `ninja` of a test target (`_TEST_TARGET`, after their options: `-C dir` and `-f file` with theirs, `-j 8`,
#: `-k 0`), `cmake --build build --target check-triton`, a suite runner (SGLang's `run_suite.py`, pytorch's
#: `test/run_test.py`), a test file run by Python or by a launcher (aiter's `python3 op_tests/test_gemm_a8w8.py`,
#: `torchrun --nproc_per_node 8 tests/test_dist.py`, `./test_all.py`, `model_tests.py`), a unit tests binary
#: (`./build/test/unit_tests`, mscclpp's `mpirun -np 8 ./build/test/mp_unit_tests`).
_TEST_RUNNERS = (r"(?:(?:python[\d.]*(?:[ \t]+-[uBOsIEq]+)*[ \t]+-m[ \t]+)?(?:pytest|py\.test|unittest|lit)(?![\w.])"
                 r"(?![^\n;&|]*[ \t]--(?:version|help|collect-only|co|fixtures|fixtures-per-test|markers)\b)"
                 r"|ctest\b(?![^\n;&|]*[ \t](?:--(?:version|help|show-only|print-labels)|-N)\b)"
                 r"|(?:tox|nox)\b(?![^\n;&|]*[ \t](?:--(?:version|help)\b|(?:-[est]|--(?:sessions?|tags|env))[ \t=]*"
                 r"(?:" + _LINTS + r"|build\b|pkg|package)))"
                 r"|bazel[ \t]+test\b"
                 # (not a dry run, nor ninja's tools; an option in quotes is another program's: `ARGS='-n 8'`)
                 r"|(?:make|ninja)(?![^\n;&|'\"]*[ \t](?-i:-n|--dry-run|--just-print|--recon|-t)\b)"
                 r"(?:[ \t]+(?:-[CfIoW][ \t]*[^-\s]\S*|-[jlk]\S*(?:[ \t]+(?:\d+|\$\S*))?"
                 r"|-(?![CfIoWjlk])\S+))*[ \t]+" + _TEST_TARGET +
                 r"|cmake[ \t]+--build[ \t]+[^-\s]\S*(?:[ \t]+(?!--target\b|-t\b)-\S+(?:[ \t]+[^-\s]\S*)?)*"
                 r"[ \t]+(?:--target|-t)(?:[ \t]+|=)" + _TEST_TARGET +
                 r"|(?:python[\d.]*(?:[ \t]+-[uBOsIEq]+)*[ \t]+)?\S*\brun_(?:suite|tests?)\.py\b"
                 # a test module by its dotted name (ROCm/mori `python -m tests.python.ccl.test_allgather`; not `python
                 # -m atom.examples.simple_inference`)
                 r"|python[\d.]*(?:[ \t]+-[uBOsIEq]+)*[ \t]+-m[ \t]+(?:\w+\.)+test_\w+(?![\w.])"
                 # a test file: run by Python, by a launcher (whose options may take a word: `--standalone`), or
                 # itself by its path (`./test_all.py`); a unit tests binary by its path (`./build/test/unit_tests`).
                 # (No path holds `=`, `;`, `&` or `|`: `TEST_FILE=tests/test_x.py` sets a variable; `;`: see
                 # TEST_LINE_PATTERN.)
                 r"|(?:python[\d.]*(?:[ \t]+-[uBOsIEq]+)*[ \t]+"
                 r"|(?:torchrun|python[\d.]*[ \t]+-m[ \t]+torch\.distributed\.(?:run|launch))(?:" + _OPTION + r")*[ \t]+"
                 r"|\.?/|(?=[^\s/;&|=]*/))"
                 r"(?:[^\s/;&|=]*/)*(?:test_\w*|(?!\w*(?:" + _SETS_UP + r"|" + _HANDLES + r"))\w+_tests?)\.py\b"
                 r"|(?:[^\s/;&|=]*/)+\w*unit_?tests?(?=[ \t]|$)"
                 r")")
#: A tests script, told by its own name: `test.sh`, `run_tests.sh`, `unittest.sh`, `runTests.sh`, `model_tests.sh`
#: (its name ends in the word), `run_test_suite.sh` (`run`, then the word); not what sets up for the tests or runs
#: around them (`install_test_deps.sh`, `download_test_data.sh`, `build_tests.sh`, `upload_test_results.sh`,
#: `run_test_container.sh`, `test_env.sh`), nor `latest.sh` or `fastest.sh`.
_TEST_SCRIPT = (r"(?:bash[ \t]+|sh[ \t]+)?(?=\S*\.sh\b)(?:\S*/)?(?![^\s/]*(?:" + _SETS_UP + r"|report|collect|copy|clean"
                r"|publish|archive|artifact|result|stat|container|docker|fixture|env|build[_-]tests?\b))"
                r"(?:[^\s/]*?(?:(?<![a-z])|(?<=unit)|(?<=run)|(?<=py)|(?<=smoke)|(?<=self)|(?<=model))tests?\.sh"
                r"|run(?=[\w-]*\.sh)(?=(?:(?!test)[\w-])*test)[\w-]*\.sh)\b")
#: What `RUNS_TESTS` matches from a command's start (what its commands say of an unnamed step: a wrong "test" counts
#: a step's time as tests', so a tests script must say so by its name).
RUNS_TESTS_PATTERN = _RUN_BY + r"(?:" + _TEST_RUNNERS + r"|" + _TEST_SCRIPT + r")"
RUNS_TESTS = re.compile("(?i)" + RUNS_TESTS_PATTERN)
#: The same, with any script whose path says test (`tests/ci/run.sh`, `build_and_test.sh`, `runtests.sh`; not one
#: that installs, prepares, fetches or pulls for them, `get_test_models.sh`, `latest.sh`): where the first test line
#: of a script bounds what is installed before its tests (`_TEST_LINE`), a line missed would take an install after
#: the tests for one before them. (Read to its first `test` once: a long token is scanned once.) It reads a whole line,
#: so a word of it stops at `;`, `&` and `|` too (`\S` of the command's patterns read on: each of the line's commands
#: tried read the rest of the line, and `if;` 12,000 times took 8.8 s).
TEST_LINE_PATTERN = (_RUN_BY + r"(?:" + _TEST_RUNNERS + r"|(?:bash[ \t]+|sh[ \t]+)?(?=\S*\.sh\b)(?!\S*(?:" + _SETS_UP
                     + r"))(?!(?:\S*/)?get[_-])(?:(?!(?<!la)test)\S)*(?<!la)test\S*\.sh\b)").replace(r"\S", r"[^\s;&|]")
_SHELL = re.compile(r"(?:set|unset|cd|pushd|popd|export|source|\.|if|then|else|elif|fi|for|while|until|do|done|case"
                    r"|esac|exit|return|shift|local|declare|trap)(?:\s|$)")
#: Text in quotes (what a command is given, no command); an unclosed `"` runs to the line's end, as bash reads it past
#: the line (and one scan does: with the closing quote required, each `"` of `"\\"\\"...` scanned the rest of the line;
#: so does a `\\` at its end, review146 y05: `"\\` 8,000 times, then `\\`, took 1.5 s).
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.?)*(?:\"|\Z)")
_KEYWORD = re.compile(r"^(?:(?:then|do|else|elif|if|!)\s+)+")


def blank_quotes(script: str) -> str:
    """A script with the text in its quotes blanked, line by line (`_QUOTED`), its length and lines kept: where a
    pattern finds commands, what an `echo "...; pip install x"` says is none."""
    return "\n".join(_QUOTED.sub(lambda quoted: " " * len(quoted.group()), line) for line in script.split("\n"))


def runs_tests(text: str) -> bool:
    """Whether a command of a line's text runs tests (`RUNS_TESTS`), each read as `StepDef` reads them (split at
    `&&`, `||`, `;` and `|`, less a shell keyword or an opening `(` or `{` before it)."""
    return any(RUNS_TESTS.match(_KEYWORD.sub("", piped.strip().lstrip("({ \t")))
               for part in re.split(r"&&|\|\||;", text) for piped in part.split("|"))
#: A command that looks at what an install put in place, or fetches and unpacks for it: no test, no build. (`env`
#: alone prints the environment; what it runs, `env X=1 python3 infer.py`, is read by `_only_looks`.)
_LOOKS = re.compile(r"(?:sudo(?:\s+-\S+)*\s+)?(?:(?:python[\d.]*\s+-m\s+)?pip[\d.]*\s+(?:list|freeze|show|check|config|cache"
                    r"|download)\b|python[\d.]*\s+(?:-c|--version)\b|(?:which|ls|cat|mkdir|cp|mv|rm|ln|chmod|chown|touch"
                    r"|tar|unzip|curl|wget|tee|env|printenv|nvidia-smi|rocm-smi|rocminfo|amd-smi|lscpu|lspci|uname|hostname"
                    r"|whoami|id|pwd|docker\s+(?:ps|images|info|version)|conda\s+(?:activate|create"
                    r"|info|list)|apt(?:-get)?\s+update|true|\[|test|git|ldconfig|virtualenv|nproc|df|du|free)(?:\s|$)"
                    r"|python[\d.]*\s+-m\s+venv\b|uv\s+venv\b|\S+\s+--version\s*$)")


#: `env` as the wrapper that runs a command (`env HIP_VISIBLE_DEVICES=0 python3 infer.py`, `sudo -E env X=1 ./bench`).
#: (`env -u X`, `env -uX`, `env -i`, `env --unset=X`, `env --`: each option one way, so a failed read is not tried
#: again every other way)
_ENV_RUNS = re.compile(r"(?:sudo(?:\s+-\S+)*\s+)?env(?:\s+(?:-[uCS]\s*(?!-)\S+|-(?![uCS-])[\w-]+|--[\w-]*(?:=\S*)?))*"
                       r"(?:\s+\w+=\S*)*\s+(?=[^\s|>&;<])")
#: What checks the work, not the machine, though `_LOOKS` takes its program: a drift check (`git diff --exit-code`,
#: `git status --porcelain`), a request to a server the job started or with a body (`curl -X POST localhost:30000`).
_CHECKS = re.compile(r"(?:sudo(?:\s+-\S+)*\s+)?(?:git\s+(?:-[Cc]\s+(?!-)\S+\s+|-\S+\s+)*(?:diff|status)\b"
                     r"|curl\b(?=[^\n|;&]*(?:\s(?:-X|--request|-d|--data\S*|-F|--form|--json)\b|localhost|127\.0\.0\.1)))")
#: What a look may pipe into: a filter of its output, or a look (`curl -fsSL URL | tar -xz`; `xargs rm -rf`).
_FILTERS = re.compile(r"\s*(?:grep|egrep|fgrep|sed|awk|sort|uniq|head|tail|wc|cut|tr|tee|jq|column|cat|less|more|true)"
                      r"(?:\s|$)|\s*$")
_SUBSTITUTED = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_XARGS = re.compile(r"\s*xargs(?:\s+-\S+)*\s+")


def _only_looks(command: str) -> bool:
    """Whether a command only looks (`_LOOKS`), what `env VAR=...` runs read as itself (review151 c01), and not a
    check of the work (`_CHECKS`, c05)."""
    wrapped = _ENV_RUNS.match(command)
    command = command[wrapped.end():] if wrapped else command
    # (what it runs to make its words, `ls $(python3 bench.py)`, must look too)
    if any(not _only_looks(inner.strip()) for pair in _SUBSTITUTED.findall(command) for inner in pair if inner):
        return False
    return bool(_LOOKS.match(command)) and not _CHECKS.match(command)


def _pipes_into_filters(part: str) -> bool:
    """Whether what a command pipes into only filters its output (`ls | grep x`), not a program (`| xargs python3`)."""
    for piped in part.split("|")[1:]:
        xargs = _XARGS.match(piped)
        if xargs:
            if not _only_looks(piped[xargs.end():]):
                return False
        elif not _FILTERS.match(piped) and not _only_looks(piped.strip()):
            return False
    return True


def parse_workflow(text: str, path: str) -> Workflow:
    """Parse a workflow file; raise WorkflowError with file and line when it is not one."""
    root, data = compose_workflow(text, path)
    jobs_node = mapping_get(root, "jobs")
    if not isinstance(jobs_node, yaml.MappingNode) or not jobs_node.value:
        raise WorkflowError(f"{path}: a workflow needs a non-empty `jobs:` mapping")
    jobs: dict[str, JobDef] = {}
    for key, value in jobs_node.value:
        job_id = _key(key)
        if not isinstance(value, yaml.MappingNode):
            raise WorkflowError(f"{path}: line {key.start_mark.line + 1}: job `{job_id}` must be a mapping")
        jobs[job_id] = _job(job_id, key, value, data["jobs"][job_id], path)
    return Workflow(path, text, root, data, jobs)


#: A `*` or `&` followed by a name's first character: the start of an alias or an anchor (not the
#: `&&` of an expression or a script: an anchor named `&...` in a file is not looked for).
_NODE_PROPERTY = re.compile(r"\*[^\s,\[\]{}]|&(?!&)[^\s,\[\]{}&]")
_TAG_BEFORE = re.compile(r"(?:^|(?<=[ \t\[{,:]))![^ \t]*$")  # (after a space, or a flow indicator: `[!!str &a x]`)


def _node_properties(text: str) -> Iterator[re.Match[str]]:
    """Each `_NODE_PROPERTY` in `text`, found from its `&`s and `*`s (`str.find` goes faster than
    the regex's own search: `may_share_nodes` of a current SGLang lane in 0.28 ms, not 0.45)."""
    for char in "&*":
        at = text.find(char)
        while at != -1:
            if (mark := _NODE_PROPERTY.match(text, at)) is not None:
                yield mark
            at = text.find(char, at + 1)


def may_share_nodes(text: str, root: yaml.Node) -> bool:
    """Whether an anchor (`&name`) or an alias (`*name`, a node shared with the anchor's) may
    begin a node in `text` (`root` its node tree): a `&` or `*` at a line's start, after a key's
    `:`, a `?`, a `-`, a flow collection's `[`, `{` (not an expression's `${{`) or `,`, spaces
    between, and not inside a value's text (a script line starting `*` in a `run: |`); or one
    after a tag (`!!str &a`: the tag starts the node, so the anchor is inside its text by the
    marks). A superset: the file is then checked whole."""
    children: dict[int, tuple[list[yaml.Node], list[int]]] = {}  # (each collection's, read once)
    for mark in _node_properties(text):
        # what stands before it on its line (a lone CR, NEL, U+2028 or U+2029 ends one too), at most 256
        # characters: a node's start is near (on a line of 90 KB with a `*` in every third, the whole line
        # each time took half a minute)
        window = text[max(0, mark.start() - 256):mark.start()]
        before = window[max(window.rfind(c) for c in _BREAK_CHARS) + 1:].rstrip(" \t")
        tag = _TAG_BEFORE.search(before)  # (or an expression's `!x &y`: counted too)
        if tag:
            before = before[:tag.start()].rstrip(" \t")
        if (not before or before[-1] in ":?,[-" or before[-1] == "{" and not before.endswith(("${", "${{"))) \
                and (tag or not _inside_a_value(text, root, mark.start(), children)):
            return True
    return False


def _inside_a_value(text: str, node: yaml.Node, offset: int,
                    children: dict[int, tuple[list[yaml.Node], list[int]]]) -> bool:
    """Whether `offset` is inside a scalar's text, after its start (where its own anchor would
    be): found by the marks, from the root down (each collection's children and where they start
    kept in `children`, so that a file of many `*` lines is not read again for each). A scalar with
    a tag starts at its tag, so its anchor may come after its start, on a later line
    (`!!str\\n  &a x`) or after a flow indicator (`[!!str &a x]`): an offset in a tagged scalar
    counts as outside; so does one in a node that contains itself through an alias (`&r [*r]`: a
    descent that would not end)."""
    seen: set[int] = set()
    while not isinstance(node, yaml.ScalarNode):
        if id(node) in seen:
            return False
        seen.add(id(node))
        known = children.get(id(node))
        if known is None:
            nodes = [child for pair in node.value for child in pair] if isinstance(node, yaml.MappingNode) \
                else list(node.value)
            known = children[id(node)] = (nodes, [child.start_mark.index for child in nodes])
        nodes, starts = known
        at = bisect.bisect_right(starts, offset) - 1  # (children do not overlap: only this one may hold it)
        if at < 0 or offset >= nodes[at].end_mark.index:
            return False
        node = nodes[at]
    return node.start_mark.index < offset < node.end_mark.index and text[node.start_mark.index] != "!"


#: YAML's line breaks: "\n", CRLF, and what a split at "\n" does not count (a lone CR, NEL, the
#: Unicode line and paragraph separators).
_YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_BREAK_CHARS = "\r\n\x85\u2028\u2029"


def odd_lines(text: str) -> bool:
    """Whether `text` has a character that makes its lines differ between YAML, "\\n" and
    `str.splitlines`: a line break a split at "\\n" does not count (a lone CR, NEL, U+2028,
    U+2029), or a BOM (YAML skips one at a line's start). In a text with any, lines are found as
    YAML finds them. (`splitlines` also breaks at \\v, \\f and \\x1c-\\x1e, which libyaml
    refuses in a file: no file foldbot reads has them.)"""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return True
    return not text.isascii() and any(c in text for c in "\x85\u2028\u2029\ufeff")


def directive(text: str) -> bool:
    """Whether `text` may hold a YAML directive (`%TAG`, `%YAML`): a `%` starting it or a line."""
    # (a lone "%" is found at memchr's speed; two characters are searched ~50x slower in a text that is not ASCII)
    return "%" in text and (text.startswith("%") or "\n%" in text or "\r%" in text)


#: What stands before an item of a block sequence on its line: the dash, spaces around it.
_DASH = re.compile(r"( *)- +")


def child_spans(text: str, node: yaml.Node, end: int) -> list[Span] | None:
    """The text of each child of a block mapping or sequence (the last one's ends at `end`,
    where the node's own ends). Such a text parses to the same value wherever it stands in a
    block collection at its column, so a check of a patched file may parse only what a patch
    touched. None when a child may not stand alone: a flow collection, a key that does not begin
    its line (`- name:`, `? key`), an item that shares its line with another's dash (`- - a`), or
    one at another column than the first (an explicit key's text, on the line after its `?`)."""
    if not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) or node.flow_style:
        return None
    starts: list[tuple[int, int, str | None]] = []
    if isinstance(node, yaml.MappingNode):
        for key, _ in node.value:
            start = _line_start_of(text, key)
            if start is None:
                return None
            starts.append((start, key.start_mark.column, key.value))
    else:
        for item in node.value:
            index = item.start_mark.index
            start = text.rfind("\n", 0, index) + 1
            dash = _DASH.fullmatch(text, start, index)
            if dash is None:
                return None
            starts.append((start, len(dash.group(1)), None))
    if any(column != starts[0][1] for _, column, _ in starts):
        return None
    bounds = [start for start, _, _ in starts[1:]] + [end]
    return [Span(start, stop, column, key) for (start, column, key), stop in zip(starts, bounds)]


def _line_start_of(text: str, key: yaml.Node) -> int | None:
    """The offset of the line a plain key begins (spaces only before it), or None."""
    index, column = key.start_mark.index, key.start_mark.column
    start = index - column
    if not isinstance(key, yaml.ScalarNode) or key.style or start < 0 \
            or text[start:index].strip(" ") or (start and text[start - 1] != "\n") \
            or not text.startswith(key.value, index):
        return None
    return start


#: libyaml counts its marks after a BOM that starts the text (the pure parser counts the BOM).
_MARKS_SKIP_A_BOM = yaml.compose("\ufeffa: 1", Loader=_Loader).value[0][0].start_mark.index == 0


def _count_the_bom(root: yaml.Node) -> None:
    """Every mark of the tree one character on, past the BOM that starts the text: the marks
    are offsets into the text, and the splices land where they point. (Columns are YAML's:
    the BOM is not in them.)"""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias: one node, reached again
            continue
        seen.add(id(node))
        for attr in ("start_mark", "end_mark"):
            mark = getattr(node, attr)
            setattr(node, attr, yaml.Mark(mark.name, mark.index + 1, mark.line, mark.column, None, None))
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def yaml_events(text: str) -> Iterator[tuple[yaml.Event, int]]:
    """The parser's events of a text foldbot's parse read (`compose_workflow`: the same parser, the
    same marks), each with its offset into the text."""
    shift = 1 if text[:1] == "\ufeff" and _MARKS_SKIP_A_BOM else 0
    for event in yaml.parse(text, Loader=_Loader):
        yield event, event.start_mark.index + shift


def compose_workflow(text: str, path: str) -> tuple[yaml.MappingNode, dict[str, Any]]:
    """The node tree and the plain data of a workflow file, without its job
    definitions (all that checking a patched file needs)."""
    try:
        root = yaml.compose(text, Loader=_Loader)
        if text[:1] == "\ufeff" and root is not None and _MARKS_SKIP_A_BOM:
            _count_the_bom(root)
    except RecursionError:
        raise WorkflowError(f"{path}: not valid YAML: nested too deep") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        raise WorkflowError(f"{path}: not valid YAML at {where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise WorkflowError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(root, yaml.MappingNode):
        raise WorkflowError(f"{path}: a workflow must be a mapping at the top level")
    try:
        data, size = _read(root, {})
        if size > MAX_VALUES:
            raise WorkflowError(f"its aliases repeat values past {MAX_VALUES:,} in all (a value read as many times as "
                                f"aliases name it; a text of {TEXT_PER_VALUE} characters counts as one); not read")
        return root, data
    except WorkflowError as exc:
        raise WorkflowError(f"{path}: {exc}") from None
    except RecursionError:  # an alias inside the node it names (`&a [*a]`), or nesting past Python's stack
        raise WorkflowError(f"{path}: a value that contains itself through an alias, or one nested too deep") from None


def _job(job_id: str, key: yaml.ScalarNode, node: yaml.MappingNode, raw: dict[str, Any], path: str) -> JobDef:
    needs = raw.get("needs")
    if needs is None:
        needs_t: tuple[str, ...] = ()
    elif isinstance(needs, str):
        needs_t = (needs,)
    elif isinstance(needs, list):
        needs_t = tuple(str(n) for n in needs)
    else:
        raise WorkflowError(f"{path}: line {key.start_mark.line + 1}: `needs` of `{job_id}` must be a name or a list")
    strategy: dict[str, Any] = raw["strategy"] if isinstance(raw.get("strategy"), dict) else {}
    matrix = strategy.get("matrix")
    if raw.get("strategy") is not None and not isinstance(raw["strategy"], dict):
        matrix_expression: str | None = "its strategy"
    elif matrix is not None and not isinstance(matrix, dict):
        matrix_expression = "its matrix"
    else:
        matrix_expression = next((f"its matrix {'list' if k in ('include', 'exclude') else 'axis'} `{k}`"
                                  for k, v in (matrix or {}).items() if not isinstance(v, list)), None)
    max_parallel = strategy.get("max-parallel")
    steps_node = mapping_get(node, "steps")
    steps = JobSteps()
    if isinstance(steps_node, yaml.SequenceNode):
        for index, step_node in enumerate(steps_node.value):
            if not isinstance(step_node, yaml.MappingNode):
                raise WorkflowError(
                    f"{path}: line {step_node.start_mark.line + 1}: step {index + 1} of `{job_id}` must be a mapping"
                )
            steps.append(_step(index, step_node, raw["steps"][index], steps))
    return JobDef(
        id=job_id,
        name_template=str(raw["name"]) if raw.get("name") is not None else None,
        needs=needs_t,
        if_=_str_or_none(raw.get("if")),
        runs_on=raw.get("runs-on"),
        matrix=matrix if isinstance(matrix, dict) else None,
        max_parallel=max_parallel if isinstance(max_parallel, int) else None,
        timeout_minutes=raw.get("timeout-minutes"),
        uses=_str_or_none(raw.get("uses")),
        steps=tuple(steps),
        key_node=key,
        node=node,
        matrix_expression=matrix_expression,
    )


def _step(index: int, node: yaml.MappingNode, raw: dict[str, Any], siblings: Sequence[StepDef] = ()) -> StepDef:
    explicit = _str_or_none(raw.get("name"))
    uses = _str_or_none(raw.get("uses"))
    run = _str_or_none(raw.get("run"))
    if explicit:
        name = explicit
    elif uses:
        name = f"Run {uses}"
    elif run:
        name = f"Run {run.strip().splitlines()[0] if run.strip() else ''}".rstrip()
    else:
        name = f"Step {index + 1}"
    return StepDef(
        index=index,
        name=name,
        explicit_name=explicit,
        uses=uses,
        run=run,
        with_=raw.get("with"),
        env=raw.get("env"),
        if_=_str_or_none(raw.get("if")),
        timeout_minutes=raw.get("timeout-minutes"),
        node=node,
        step_id=_str_or_none(raw.get("id")),
        raw=raw,
        siblings=siblings,
    )


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- expressions -------------------------------------------------------------------------------

def expressions(text: str) -> list[str]:
    """The ``${{ ... }}`` expressions in a string, stripped."""
    return [m.group(1).strip() for m in _EXPR.finditer(text, 0, expression_end(text))]


_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
#: A number an expression compares with, and the operator: no value its timeout may take.
_COMPARED = re.compile(r"(?:[=!]=|[<>]=?)\s*'?-?\d+(?:\.\d+)?'?(?![\w.])|(?<![\w.'])'?-?\d+(?:\.\d+)?'?\s*(?:[=!]=|[<>]=?)")


def timeout_minutes(value: Any, labels: tuple[str, ...] = ()) -> float | None:
    """A ``timeout-minutes`` value in minutes.

    A plain number is itself. An expression such as
    ``${{ (inputs.runner_arch || 'mi300') == 'mi300' && 180 || 150 }}`` takes the
    branch whose quoted condition value appears in the measured runs' runner
    labels, else the smallest number in it (the safe choice). None for no number, or one
    no timeout is (not positive, not finite: `NaN`, `inf`, 400 digits).
    """
    found = _minutes(value, labels)
    return found if found is not None and 0 < found < math.inf else None


def _minutes(value: Any, labels: tuple[str, ...]) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _float(value)
    text = str(value).strip()
    if re.fullmatch(r"[0-9_.eE+-]+", text):  # a number as text (`45`, `45.`, `1_000`; not `nan`, `inf`)
        return _float(text)
    exprs = expressions(text) or [text]
    expr = exprs[0]
    branch = re.search(r"==\s*'([^']*)'\s*&&\s*(\d+(?:\.\d+)?)\s*\|\|\s*(\d+(?:\.\d+)?)", expr)
    # (a runner's name is words, `mi300`; `matrix.part == '0'` is no runner's, and `'0'` is in many labels)
    if branch and labels and re.search(r"[A-Za-z]", branch.group(1)):
        wanted, then_value, else_value = branch.group(1), float(branch.group(2)), float(branch.group(3))
        if any(wanted and wanted in label for label in labels):
            return then_value
        return else_value
    # the values it may take, not what it compares (`matrix.part == 0 && 180 || 120`: 120, not 0)
    numbers = [float(n) for n in _NUMBER.findall(_COMPARED.sub(" ", expr)) if float(n) > 0]
    return min(numbers) if numbers else None


def _float(value: Any) -> float | None:
    """A number as a float; None past what a float holds (an integer of 400 digits)."""
    try:
        return float(value)
    except (OverflowError, ValueError):
        return None


def substitute_matrix(text: str, values: dict[str, Any]) -> str:
    """Replace ``${{ matrix.KEY }}`` references with the given values."""

    def repl(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        ref = re.fullmatch(r"matrix\.([A-Za-z0-9_-]+)", expr)
        if ref and ref.group(1) in values:
            return str(values[ref.group(1)])
        return match.group(0)

    end = expression_end(text)
    return _EXPR.sub(repl, text[:end]) + text[end:]
