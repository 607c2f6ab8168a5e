"""Just enough GitHub Actions workflow parsing for ``workflow_dispatch`` validation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from .expressions import ExpressionError, interpolate


class DispatchRejected(Exception):
    """A dispatch GitHub would refuse with 422; ``str(exc)`` is GitHub's message."""


def load_workflow(text: str) -> dict[Any, Any]:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DispatchRejected(f"Invalid Argument - failed to parse workflow: {exc}") from exc
    return document if isinstance(document, dict) else {}


def triggers(document: Mapping[Any, Any]) -> dict[str, Any]:
    """The ``on:`` section as a dict. YAML 1.1 reads the bare key ``on`` as ``True``."""
    section = document.get("on", document.get(True))
    if isinstance(section, str):
        return {section: None}
    if isinstance(section, list):
        return {str(name): None for name in section}
    if isinstance(section, dict):
        return {str(name): value for name, value in section.items()}
    return {}


def dispatch_inputs(document: Mapping[Any, Any]) -> dict[str, dict[str, Any]] | None:
    """Declared ``workflow_dispatch`` inputs, or ``None`` without that trigger."""
    on = triggers(document)
    if "workflow_dispatch" not in on:
        return None
    config = on["workflow_dispatch"] or {}
    inputs = config.get("inputs") if isinstance(config, dict) else None
    if not isinstance(inputs, dict):
        return {}
    return {str(name): (spec if isinstance(spec, dict) else {}) for name, spec in inputs.items()}


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def resolve_inputs(
    spec: Mapping[str, Mapping[str, Any]], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Validate ``given`` against the declared inputs; return them with defaults filled."""
    unexpected = [name for name in given if name not in spec]
    if unexpected:
        raise DispatchRejected(f"Unexpected inputs provided: {json.dumps(unexpected)}")
    resolved: dict[str, Any] = {}
    for name, declared in spec.items():
        if name in given:
            value = given[name]
        elif "default" in declared:
            value = declared["default"]
        elif declared.get("required"):
            raise DispatchRejected(f"Required input '{name}' not provided")
        else:
            continue
        options = declared.get("options")
        if (
            declared.get("type") == "choice"
            and isinstance(options, list)
            and _as_text(value) not in [_as_text(option) for option in options]
        ):
            raise DispatchRejected(
                f"Provided value '{_as_text(value)}' for input '{name}' not in the list "
                "of allowed values"
            )
        resolved[name] = value
    return resolved


def run_name(document: Mapping[Any, Any], inputs: Mapping[str, Any], fallback: str, actor: str = "") -> str:
    """The run's ``display_title``: ``run-name`` with its expressions evaluated (GitHub's
    expression language: SGLang's lanes use ``&&``, ``||`` and ``format``), else, when there
    is none or it comes to nothing, ``fallback``. One that is not a valid expression is
    refused, as GitHub refuses the dispatch."""
    template = document.get("run-name")
    if not isinstance(template, str):
        return fallback
    contexts = {"inputs": dict(inputs), "vars": {}, "github": {"event_name": "workflow_dispatch", "actor": actor,
                                                   "triggering_actor": actor,
                                                   "event": {"inputs": {k: _as_text(v) for k, v in inputs.items()}}}}
    try:
        title = interpolate(template, contexts).strip()
    except ExpressionError as exc:
        raise DispatchRejected(f"The workflow's run-name is not valid: {exc}") from exc
    return title or fallback


def workflow_name(document: Mapping[Any, Any]) -> str | None:
    name = document.get("name")
    return name if isinstance(name, str) else None
