"""Settings: the repository's `.github/foldbot.yml` and its defaults.

The defaults fit SGLang's AMD CI as it is, so a repository like it needs no file.
Pure: text in, a frozen `RepoConfig` out, or a `ConfigError` that names the key.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

CONFIG_PATH = ".github/foldbot.yml"


class ConfigError(ValueError):
    """A `.github/foldbot.yml` that cannot be used; the message names the key."""


@dataclass(frozen=True)
class StepRule:
    """Steps whose name matches `pattern` (a regex, searched from the start) are `category`."""

    pattern: str
    category: str  # "setup" | "test" | "other"

    def matches(self, name: str) -> bool:
        return _compiled(self.pattern).match(name) is not None


CATEGORIES = ("setup", "test", "other")

#: Ordered; the first rule that matches wins; no match means "other".
DEFAULT_STEP_RULES: tuple[StepRule, ...] = (
    StepRule(r"Set up job$", "setup"),
    StepRule(r"Initialize containers$", "setup"),
    StepRule(r"Checkout code", "setup"),
    StepRule(r"Run actions/checkout@", "setup"),
    StepRule(r"Ensure VRAM is clear", "setup"),
    StepRule(r"Download artifacts", "setup"),
    StepRule(r"Run actions/download-artifact@", "setup"),
    StepRule(r"Start CI container", "setup"),
    StepRule(r"Setup docker", "setup"),
    StepRule(r"Start Special Container", "setup"),
    StepRule(r"Install dependencies", "setup"),
    StepRule(r"Setup kernel caches", "setup"),
    StepRule(r"Diagnose HF cache", "setup"),
    StepRule(r"Post ", "setup"),
    StepRule(r"Complete job$", "setup"),
    StepRule(r"Stop and remove containers$", "setup"),
    StepRule(r"Run ", "test"),
    StepRule(r"Accuracy Test", "test"),
    StepRule(r"Performance Test", "test"),
    StepRule(r"Nightly ", "test"),
    StepRule(r"Benchmark ", "test"),
    StepRule(r"Evaluate ", "test"),
)

DEFAULT_LANES = (".github/workflows/pr-test-amd.yml", ".github/workflows/pr-test-amd-rocm*.yml")
DEFAULT_CI_PATHS = ("scripts/ci/**", CONFIG_PATH)


@dataclass(frozen=True)
class RepoConfig:
    lanes: tuple[str, ...] = DEFAULT_LANES
    exclude_lanes: tuple[str, ...] = ()
    amd_runner_pattern: str = r"mi\d{3}|gfx9\d{2}|rocm|\bamd\b"
    step_rules: tuple[StepRule, ...] = DEFAULT_STEP_RULES
    fold_max_test_minutes: float = 15.0
    fold_min_setup_share: float = 0.5
    reshard_safety: float = 0.6
    min_samples: int = 3
    history_runs: int = 10
    comment_on: str = "ci-prs"
    ci_paths: tuple[str, ...] = DEFAULT_CI_PATHS
    dispatch_permission: str = "write"
    approve_permission: str = "maintain"
    dispatch_cooldown_minutes: int = 30
    ci_permissions_file: str | None = ".github/CI_PERMISSIONS.json"
    _categories: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # memo of classify
    _amd: dict[tuple[str, ...], bool] = field(default_factory=dict, compare=False, repr=False)  # memo of is_amd_runner

    def is_lane(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, p) for p in self.lanes) and not any(
            fnmatch.fnmatchcase(path, p) for p in self.exclude_lanes
        )

    def classify(self, step_name: str) -> str:
        category = self._categories.get(step_name)
        if category is None:
            category = self._categories[step_name] = _classify(self.step_rules, step_name)
        return category

    def is_amd_runner(self, labels: tuple[str, ...] | list[str] | str) -> bool:
        key = (labels,) if isinstance(labels, str) else tuple(labels)
        amd = self._amd.get(key)
        if amd is None:
            pattern = _compiled(self.amd_runner_pattern, re.I)
            amd = self._amd[key] = any(pattern.search(label) for label in key)
        return amd


def _classify(rules: tuple[StepRule, ...], step_name: str) -> str:
    for rule in rules:
        if rule.matches(step_name):
            return rule.category
    return "other"


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_KNOWN_KEYS = {
    "lanes": "a list of workflow paths or globs",
    "exclude_lanes": "a list of workflow paths or globs",
    "amd_runner_pattern": "a regular expression",
    "step_rules": "a list of {pattern, category}",
    "replace_default_step_rules": "true or false",
    "fold": "a mapping with max_test_minutes, min_setup_share",
    "reshard": "a mapping with safety",
    "min_samples": "a whole number",
    "history_runs": "a whole number",
    "comment_on": "ci-prs, all-prs or none",
    "ci_paths": "a list of globs",
    "permissions": "a mapping with dispatch and approve: read, triage, write, maintain or admin",
    "dispatch_cooldown_minutes": "a whole number of minutes (0: none)",
    "ci_permissions_file": "a path in the repository, or null",
}

ROLES = ("none", "read", "triage", "write", "maintain", "admin")


def parse_config(text: str | None) -> RepoConfig:
    """Parse `.github/foldbot.yml`; None or empty text gives the defaults."""
    if text is None or not text.strip():
        return RepoConfig()
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{CONFIG_PATH} is not valid YAML: {exc}") from None
    if raw is None:
        return RepoConfig()
    if not isinstance(raw, dict):
        raise ConfigError(f"{CONFIG_PATH} must be a mapping")
    unknown = sorted(str(k) for k in raw if k not in _KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{CONFIG_PATH}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN_KEYS))}")
    kwargs: dict[str, Any] = {}
    if "lanes" in raw:
        kwargs["lanes"] = _str_list(raw, "lanes")
    if "exclude_lanes" in raw:
        kwargs["exclude_lanes"] = _str_list(raw, "exclude_lanes")
    if "amd_runner_pattern" in raw:
        kwargs["amd_runner_pattern"] = _regex(raw["amd_runner_pattern"], "amd_runner_pattern")
    rules = _step_rules(raw.get("step_rules") or [])
    if raw.get("replace_default_step_rules"):
        kwargs["step_rules"] = tuple(rules)
    elif rules:
        kwargs["step_rules"] = tuple(rules) + DEFAULT_STEP_RULES
    fold = _mapping(raw, "fold")
    if "max_test_minutes" in fold:
        kwargs["fold_max_test_minutes"] = _number(fold["max_test_minutes"], "fold.max_test_minutes", 0, 10_000)
    if "min_setup_share" in fold:
        kwargs["fold_min_setup_share"] = _number(fold["min_setup_share"], "fold.min_setup_share", 0, 1)
    reshard = _mapping(raw, "reshard")
    if "safety" in reshard:
        kwargs["reshard_safety"] = _number(reshard["safety"], "reshard.safety", 0.05, 1)
    for key in ("min_samples", "history_runs"):
        if key in raw:
            value = raw[key]
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 100:
                raise ConfigError(f"{CONFIG_PATH}: `{key}` must be a whole number from 1 to 100, not {value!r}")
            kwargs[key] = value
    if "comment_on" in raw:
        if raw["comment_on"] not in ("ci-prs", "all-prs", "none"):
            raise ConfigError(f"{CONFIG_PATH}: `comment_on` must be ci-prs, all-prs or none, not {raw['comment_on']!r}")
        kwargs["comment_on"] = raw["comment_on"]
    if "ci_paths" in raw:
        kwargs["ci_paths"] = _str_list(raw, "ci_paths")
    permissions = _mapping(raw, "permissions")
    for command in permissions:
        if command not in ("dispatch", "approve"):
            raise ConfigError(f"{CONFIG_PATH}: `permissions.{command}` is not a command; use dispatch or approve")
        if permissions[command] not in ROLES[1:]:
            raise ConfigError(f"{CONFIG_PATH}: `permissions.{command}` must be one of {', '.join(ROLES[1:])}")
        kwargs[f"{command}_permission"] = permissions[command]
    if "dispatch_cooldown_minutes" in raw:
        value = raw["dispatch_cooldown_minutes"]
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1440:
            raise ConfigError(f"{CONFIG_PATH}: `dispatch_cooldown_minutes` must be a whole number from 0 to 1440")
        kwargs["dispatch_cooldown_minutes"] = value
    if "ci_permissions_file" in raw:
        value = raw["ci_permissions_file"]
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{CONFIG_PATH}: `ci_permissions_file` must be a path or null")
        kwargs["ci_permissions_file"] = value
    return RepoConfig(**kwargs)


def _mapping(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise ConfigError(f"{CONFIG_PATH}: `{key}` must be a mapping")
    return value


def _str_list(raw: dict[str, Any], key: str) -> tuple[str, ...]:
    value = raw[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{CONFIG_PATH}: `{key}` must be a list of strings")
    return tuple(value)


def _regex(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{CONFIG_PATH}: `{key}` must be a string")
    try:
        re.compile(value)
    except re.error as exc:
        raise ConfigError(f"{CONFIG_PATH}: `{key}` is not a valid regular expression: {exc}") from None
    return value


def _number(value: Any, key: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(f"{CONFIG_PATH}: `{key}` must be a number from {low:g} to {high:g}, not {value!r}")
    return float(value)


def _step_rules(value: Any) -> list[StepRule]:
    if not isinstance(value, list):
        raise ConfigError(f"{CONFIG_PATH}: `step_rules` must be a list of {{pattern, category}}")
    rules = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"pattern", "category"}:
            raise ConfigError(f"{CONFIG_PATH}: step_rules[{i}] must have exactly `pattern` and `category`")
        if item["category"] not in CATEGORIES:
            raise ConfigError(f"{CONFIG_PATH}: step_rules[{i}].category must be one of {', '.join(CATEGORIES)}")
        rules.append(StepRule(_regex(item["pattern"], f"step_rules[{i}].pattern"), item["category"]))
    return rules


def lane_name(path: str) -> str:
    """`pr-test-amd-rocm720.yml` → `rocm720`; `pr-test-amd.yml` → `amd`; others: the file stem."""
    stem = path.rsplit("/", 1)[-1]
    stem = re.sub(r"\.ya?ml$", "", stem)
    match = re.fullmatch(r"(?:.*-)?amd(?:-(.+))?", stem)
    if match:
        return match.group(1) or "amd"
    return stem
