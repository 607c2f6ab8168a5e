"""`bot/foldbot.schema.json` says what `parse_config` enforces: the same keys, types and bounds,
so an editor that validates `.github/foldbot.yml` with it flags what the App would refuse."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from bot.config import _KNOWN_KEYS, ConfigError, RepoConfig, effective_settings, parse_config

SCHEMA = json.loads(resources.files("bot").joinpath("foldbot.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)

#: Values that sit on, inside and outside every bound and type of a setting.
VALUES: list[Any] = [
    None, True, False, -1, 0, 0.04, 0.05, 0.5, 1, 1.5, 2, 5.0, 100, 101, 1000, 1001, 1024, 1025, 1440, 1441,
    10000, 10001, "", "x", "(", "write", "none", "admin", "ci-prs", "all-prs", [], ["a", "b"], [1], {}, {"x": 1},
]
NESTED = {"fold": ("max_test_minutes", "min_setup_share"), "reshard": ("safety",),
          "permissions": ("dispatch", "approve"), "logs": ("fetch", "max_jobs", "max_mb")}


def parses(data: Any) -> bool:
    try:
        parse_config(yaml.safe_dump(data))
    except ConfigError:
        return False
    return True


def agree(data: Any) -> None:
    valid = VALIDATOR.is_valid(data)
    assert parses(data) == valid, f"{data!r}: parse_config {'accepts' if parses(data) else 'refuses'}, the schema " \
                                  f"{'accepts' if valid else 'refuses'}"


def test_the_schema_is_a_valid_draft_2020_12_schema_of_every_key() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(SCHEMA["properties"]) == set(_KNOWN_KEYS)
    for section, keys in NESTED.items():
        assert set(SCHEMA["properties"][section]["properties"]) == set(keys)


def test_the_schemas_defaults_are_foldbots() -> None:
    defaults = effective_settings(RepoConfig())
    for key, spec in SCHEMA["properties"].items():
        if "default" in spec:
            assert spec["default"] == defaults[key], key
    for section in NESTED:
        for key, spec in SCHEMA["properties"][section]["properties"].items():
            assert spec["default"] == defaults[section][key], f"{section}.{key}"


@pytest.mark.parametrize("key", sorted(_KNOWN_KEYS))
def test_each_setting_agrees_on_every_value(key: str) -> None:
    for value in VALUES:
        agree({key: value})


@pytest.mark.parametrize("section,key", [(s, k) for s, keys in NESTED.items() for k in keys])
def test_each_nested_setting_agrees_on_every_value(section: str, key: str) -> None:
    for value in VALUES:
        agree({section: {key: value}})


@pytest.mark.parametrize("data", [
    None,
    {},
    {"lane": ["x"]},
    {"fold": {"max_test_mins": 10}},
    {"reshard": {"safety": 0.5, "extra": 1}},
    {"lanes": ".github/workflows/gpu.yml", "exclude_lanes": [], "ci_paths": "ci/**"},
    {"step_rules": [{"pattern": "Test RCCL", "category": "test"}], "replace_default_step_rules": True},
    {"step_rules": [{"pattern": "Test RCCL", "category": "build"}]},
    {"step_rules": [{"pattern": "(", "category": "test"}]},
    {"step_rules": [{"pattern": "x"}]},
    {"step_rules": [{"pattern": "x", "category": "test", "name": "y"}]},
    {"step_rules": ["Test RCCL"]},
    {"amd_runner_pattern": "mi3[0-9]+"},
    {"amd_runner_pattern": "mi3[0-9"},
    {"permissions": {"dispatch": "triage", "approve": "admin"}},
    {"permissions": {"dispatch": "none"}},
    {"ci_permissions_file": None},
    {"logs": {"fetch": False, "max_jobs": 0, "max_mb": 1}},
    {"logs": {"fetch": "yes"}},
    {"min_samples": 5.0, "history_runs": 100},
    {"min_samples": 2.5},
    {"dispatch_cooldown_minutes": True},
    {1: "x"},
    ["lanes"],
    "lanes",
])
def test_the_schema_and_parse_config_agree(data: Any) -> None:
    agree(data)
