"""GitHub Actions expressions (``${{ ... }}``), as far as a workflow's ``run-name`` uses them.

GitHub's reference ("Evaluate expressions in workflows and actions"): literals (``null``,
booleans, numbers, ``'strings'`` with ``''`` for a quote), contexts (``inputs.x``,
``github.event.inputs.x``, ``a['b']``), the operators ``( ) [ ] . ! < <= > >= == != && ||``
(that precedence, highest first), and the functions ``format``, ``contains``, ``startsWith``,
``endsWith`` and ``join``. ``&&`` and ``||`` give one of their operands, not a boolean (so
``a && b || c`` is a conditional); falsy are ``false``, ``0``, ``-0``, ``''``, ``null`` and
``NaN``; strings compare without regard to case; a comparison of mixed types compares numbers.
A property this fake does not model (``github.repository``, say) is ``null``; a named value
other than ``github``, ``inputs`` and ``vars`` (a typo: ``input.x``), or a syntax error, raises
``ExpressionError``, as GitHub refuses the workflow. Ordering compares strings upper-cased (.NET's
OrdinalIgnoreCase) and treats ``null`` and booleans as numbers. A ``}}`` inside a string literal
does not end a ``${{ }}``, as GitHub's template reader skips literals.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any


class ExpressionError(ValueError):
    """The expression is not valid (GitHub refuses the workflow)."""


_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|[!<>()\[\].,])|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            raise ExpressionError(f"unexpected symbol at {position}: {text[position:position + 10]!r}")
        position = match.end()
        kind = match.lastgroup
        value = match.group(kind or "")
        if kind == "string":
            out.append(("value", value[1:-1].replace("''", "'")))
        elif kind == "number":
            out.append(("value", float(int(value, 16)) if value.lower().startswith(("0x", "-0x")) else float(value)))
        elif kind == "name" and value in ("true", "false", "null"):
            out.append(("value", {"true": True, "false": False, "null": None}[value]))
        else:
            out.append((kind or "", value))
    return out


def truthy(value: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (False, 0, "", None)


def text(value: Any) -> str:
    """A value as GitHub writes it into a string (``format``, ``${{ }}`` in text)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2)
    return str(value)


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def _compare(left: Any, right: Any) -> tuple[Any, Any]:
    if isinstance(left, str) and isinstance(right, str):
        return left.upper(), right.upper()
    if type(left) is type(right) and isinstance(left, float):
        return left, right
    if type(left) is type(right) and isinstance(left, (dict, list)):
        return id(left), id(right)  # (objects are equal only to themselves)
    return _number(left), _number(right)


def _format(template: Any, *args: Any) -> str:
    pattern = text(template)

    def one(match: re.Match[str]) -> str:
        if match.group(0) in ("{{", "}}"):
            return match.group(0)[0]
        index = int(match.group(1))
        if index >= len(args):
            raise ExpressionError(f"format: no argument {index}")
        return text(args[index])

    return re.sub(r"\{\{|\}\}|\{(\d+)\}", one, pattern)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "format": _format,
    "contains": lambda where, what: (
        any(_compare(item, what)[0] == _compare(item, what)[1] for item in where)
        if isinstance(where, list) else text(what).casefold() in text(where).casefold()),
    "startswith": lambda value, prefix: text(value).casefold().startswith(text(prefix).casefold()),
    "endswith": lambda value, suffix: text(value).casefold().endswith(text(suffix).casefold()),
    "join": lambda values, separator=",": (
        text(separator).join(text(v) for v in values) if isinstance(values, list) else text(values)),
}


class _Parser:
    def __init__(self, tokens: list[tuple[str, Any]], contexts: Mapping[str, Any]) -> None:
        self.tokens, self.at, self.contexts = tokens, 0, contexts

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, op: str | None = None) -> tuple[str, Any]:
        token = self.peek()
        if token is None or (op is not None and token != ("op", op)):
            raise ExpressionError(f"expected {op or 'a value'}, found {token[1] if token else 'the end'}")
        self.at += 1
        return token

    def is_op(self, *ops: str) -> bool:
        token = self.peek()
        return token is not None and token[0] == "op" and token[1] in ops

    def expression(self) -> Any:
        value = self.conjunction()
        while self.is_op("||"):
            self.take()
            right = self.conjunction()
            value = value if truthy(value) else right
        return value

    def conjunction(self) -> Any:
        value = self.equality()
        while self.is_op("&&"):
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self) -> Any:
        value = self.relation()
        while self.is_op("==", "!="):
            op = self.take()[1]
            left, right = _compare(value, self.relation())
            value = (left == right) if op == "==" else (left != right)
        return value

    def relation(self) -> Any:
        value = self.unary()
        while self.is_op("<", "<=", ">", ">="):
            op = self.take()[1]
            left, right = _compare(value, self.unary())
            if isinstance(left, float) and (math.isnan(left) or math.isnan(right)):
                value = False
                continue
            value = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
        return value

    def unary(self) -> Any:
        if self.is_op("!"):
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        value = self.primary()
        while self.is_op(".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                if kind != "name":
                    raise ExpressionError(f"expected a property name, found {name}")
                value = value.get(name) if isinstance(value, Mapping) else None
            else:
                key = self.expression()
                self.take("]")
                if isinstance(value, Mapping):
                    value = value.get(text(key))
                elif isinstance(value, list) and isinstance(key, float) and key.is_integer() and 0 <= key < len(value):
                    value = value[int(key)]
                else:
                    value = None
        return value

    def primary(self) -> Any:
        kind, value = self.take()
        if kind == "value":
            return value
        if (kind, value) == ("op", "("):
            inner = self.expression()
            self.take(")")
            return inner
        if kind == "name":
            if self.is_op("("):
                function = _FUNCTIONS.get(value.lower())
                if function is None:
                    raise ExpressionError(f"unrecognized function: {value}")
                self.take("(")
                args = []
                while not self.is_op(")"):
                    args.append(self.expression())
                    if not self.is_op(")"):
                        self.take(",")
                self.take(")")
                try:
                    return function(*args)
                except TypeError as exc:
                    raise ExpressionError(f"{value}: wrong arguments") from exc
            if value not in self.contexts:
                raise ExpressionError(f"Unrecognized named-value: '{value}'")
            return self.contexts.get(value)
        raise ExpressionError(f"unexpected {value!r}")


def evaluate(expression: str, contexts: Mapping[str, Any]) -> Any:
    """The value of one expression (what is inside ``${{ }}``)."""
    parser = _Parser(_tokens(expression), contexts)
    value = parser.expression()
    if parser.peek() is not None:
        raise ExpressionError(f"unexpected {parser.peek()[1]!r} after the expression")  # type: ignore[index]
    return value


def interpolate(template: str, contexts: Mapping[str, Any]) -> str:
    """A string with ``${{ }}`` expressions in it, each written as text (the closing ``}}`` is
    looked for outside ``'...'`` literals, as GitHub's template reader does)."""
    out, at = [], 0
    while (start := template.find("${{", at)) >= 0:
        out.append(template[at:start])
        position, quoted = start + 3, False
        while position < len(template) and (quoted or not template.startswith("}}", position)):
            if template[position] == "'":
                quoted = not quoted  # ('' inside a literal: out and back in)
            position += 1
        if position >= len(template):
            raise ExpressionError(f"an expression is not closed: {template[start:start + 30]!r}")
        out.append(text(evaluate(template[start + 3:position], contexts)))
        at = position + 2
    return "".join(out) + template[at:]


__all__ = ["ExpressionError", "evaluate", "interpolate", "text", "truthy"]
