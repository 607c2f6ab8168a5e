"""`.github/foldbot.yml`: defaults that fit SGLang, and one clear error per bad key."""

from __future__ import annotations

import pytest
import yaml

from bot.config import DEFAULT_STEP_RULES, ConfigError, RepoConfig, effective_settings, lane_name, parse_config
from bot.workflow import WorkflowError, parse_workflow


def test_defaults_pick_sglang_lanes() -> None:
    config = parse_config(None)
    assert config == RepoConfig()
    assert config.is_lane(".github/workflows/pr-test-amd.yml")
    assert config.is_lane(".github/workflows/pr-test-amd-rocm720.yml")
    assert not config.is_lane(".github/workflows/pr-test-amd-extra.yml")
    assert not config.is_lane(".github/workflows/pr-test.yml")


@pytest.mark.parametrize("path,name", [
    (".github/workflows/pr-test-amd-rocm720.yml", "rocm720"),
    (".github/workflows/pr-test-amd.yml", "amd"),
    (".github/workflows/nightly.yaml", "nightly"),
])
def test_lane_names(path: str, name: str) -> None:
    assert lane_name(path) == name


def test_a_full_config() -> None:
    config = parse_config("""
lanes: [.github/workflows/gpu-*.yml]
exclude_lanes: [.github/workflows/gpu-extra.yml]
fold: {max_test_minutes: 20, min_setup_share: 0.4}
reshard: {safety: 0.5}
min_samples: 5
comment_on: all-prs
""")
    assert config.is_lane(".github/workflows/gpu-a.yml") and not config.is_lane(".github/workflows/gpu-extra.yml")
    assert (config.fold_max_test_minutes, config.fold_min_setup_share, config.reshard_safety) == (20, 0.4, 0.5)
    assert (config.min_samples, config.comment_on) == (5, "all-prs")


@pytest.mark.parametrize("text,message", [
    ("lanes: [", "foldbot.yml: not valid YAML at line 1, column 9: expected the node content"),
    ("- a\n- b\n", "the file must be a mapping of settings"),
    ("lane: x\n", "`lane` is not a setting; did you mean `lanes`?"),
    ("fold: {min_setup_share: 2}\n", "`fold.min_setup_share` must be a number from 0 to 1, not 2"),
    ("reshard: 0.5\n", "`reshard` must be a mapping"),
    ("step_rules: [{pattern: '(', category: setup}]\n", "step_rules[0].pattern` is not a valid regular expression"),
    ("step_rules: [{pattern: 'x', category: build}]\n", "step_rules[0].category must be one of setup, test, other"),
    ("comment_on: sometimes\n", "`comment_on` must be ci-prs, all-prs or none"),
    ("history_runs: 0\n", "`history_runs` must be a whole number from 1 to 100"),
    ("fold: {max_test_mins: 10}\n", "`fold.max_test_mins` is not a setting; did you mean `fold.max_test_minutes`?"),
    ("reshard: {safty: 0.5}\n", "`reshard.safty` is not a setting; did you mean `reshard.safety`?"),
    ("permissions: {dispach: write}\n", "`permissions.dispach` is not a setting; did you mean `permissions.dispatch`?"),
    ("colour: blue\n", "`colour` is not a setting; use lanes, exclude_lanes, amd_runner_pattern,"),
    ("replace_default_step_rules: 'yes'\n", "`replace_default_step_rules` must be true or false, not 'yes'"),
])
def test_bad_config_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(text)
    assert message in str(error.value)


@pytest.mark.parametrize("text,message", [
    ("name: x\njobs:\n  a: [\n", "ci.yml: not valid YAML at line 4, column 1"),
    ("- a\n", "ci.yml: a workflow must be a mapping at the top level"),
    ("name: x\non: push\n", "ci.yml: a workflow needs a non-empty `jobs:` mapping"),
    ("on: push\njobs:\n  a: 3\n", "ci.yml: line 3: job `a` must be a mapping"),
    ("on: push\njobs:\n  a:\n    needs: {x: 1}\n", "`needs` of `a` must be a name or a list"),
    ("on: push\njobs:\n  a: {runs-on: x}\n  a: {runs-on: y}\n", "ci.yml: line 4: `a` is already defined in this mapping"),
    ("on: push\njobs:\n  a: {runs-on: x}\njobs:\n  b: {runs-on: y}\n", "ci.yml: line 4: `jobs` is already defined"),
    ("on: push\njobs:\n  a:\n    runs-on: x\n    env: {[1]: 2}\n", "ci.yml: line 5: a mapping key must be a plain value"),
])
def test_broken_workflows_are_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(WorkflowError) as error:
        parse_workflow(text, "ci.yml")
    assert message in str(error.value)


def test_a_refused_value_is_shown_short_whatever_it_reads_out_to() -> None:
    """The error quoted the value with `repr`, which reads every alias out: nine of nine, seven deep,
    made a 377-byte config 1.6 GB of text (a reply GitHub refused); so did a 70 KB string."""
    levels = ["&a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]"] + [f"&a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    with pytest.raises(ConfigError) as bomb:
        parse_config(f"min_samples: [{', '.join(levels)}]\n")
    assert str(bomb.value) == (".github/foldbot.yml: `min_samples` must be a whole number from 1 to 100, not [[1, 1, 1, 1, "
                               "...], [[...], [...], [...], [...], ...], [[...], [...], [...], [...], ...], [[...], [...], "
                               "[...], [...], ...], ...]")
    with pytest.raises(ConfigError) as long:
        parse_config(f"comment_on: {'x' * 70_000}\n")
    assert str(long.value) == (".github/foldbot.yml: `comment_on` must be ci-prs, all-prs or none, not "
                               f"'{'x' * 27}...{'x' * 28}'")


def test_workflow_aliases_of_a_long_text_count_its_length() -> None:
    """300 aliases of one 1 MB string are 300 MB read out: the schema check's messages quote what they
    refuse, and took 9 s and 1.25 GB. A text counts as one value per 64 characters."""
    big = "x" * 100_000
    text = f"on: push\nenv: [&b '{big}', {', '.join(['*b'] * 150)}]\njobs: {{a: {{runs-on: x, steps: [{{run: y}}]}}}}\n"
    with pytest.raises(WorkflowError, match=r"^ci\.yml: its aliases repeat values past 200,000 in all \(a value read "
                                            r"as many times as aliases name it; a text of 64 characters counts as one\)"):
        parse_workflow(text, "ci.yml")
    parse_workflow(text.replace(", ".join(["*b"] * 150), "*b"), "ci.yml")  # (read once, it is one long text)


def test_on_is_a_string_key() -> None:
    wf = parse_workflow("on:\n  workflow_dispatch:\n    inputs:\n      x: {type: string}\njobs:\n  a:\n    runs-on: x\n", "ci.yml")
    assert "on" in wf.data and True not in wf.data
    assert wf.dispatch_inputs() == {"x": {"type": "string"}}


def test_a_setting_written_twice_is_refused_not_half_dropped() -> None:
    """YAML keeps a repeated key's last value: a second `fold:` block dropped the first's
    `max_test_minutes: 20` without a word, and `config check` said ok. Every repeat is named, with
    its lines, at any depth."""
    with pytest.raises(ConfigError) as error:
        parse_config("fold:\n  max_test_minutes: 20\nreshard: {safety: 0.5, safety: 0.6}\nfold:\n  min_setup_share: 0.3\n"
                     "step_rules:\n  - {pattern: x, category: test, category: setup}\n")
    assert error.value.problems == (
        "`reshard.safety` is written twice (lines 3 and 3): write its settings once",
        "`fold` is written twice (lines 1 and 4): write its settings once",
        "`step_rules[0].category` is written twice (lines 7 and 7): write its settings once",
    )


def test_every_problem_is_named_at_once() -> None:
    """The dashboard shows the whole list, so one push fixes the file."""
    with pytest.raises(ConfigError) as error:
        parse_config("lane: x\nfold: {min_setup_share: 2, max_test_minutes: -1}\nstep_rules: [{pattern: '('}, 3]\n")
    assert error.value.problems == (
        "`lane` is not a setting; did you mean `lanes`?",
        "step_rules[0] must have exactly `pattern` and `category`",
        "step_rules[1] must have exactly `pattern` and `category`",
        "`fold.max_test_minutes` must be a number from 0 to 10000, not -1",
        "`fold.min_setup_share` must be a number from 0 to 1, not 2",
    )
    assert str(error.value) == ".github/foldbot.yml: " + "; ".join(error.value.problems)


@pytest.mark.parametrize("text", [
    "",
    "step_rules: [{pattern: 'Test RCCL', category: test}]\nlanes: .github/workflows/gpu.yml\nmin_samples: 5.0\n",
    "step_rules: [{pattern: 'x', category: other}]\nreplace_default_step_rules: true\nci_permissions_file: null\n",
    "replace_default_step_rules: true\npermissions: {approve: admin}\nlogs: {fetch: false, max_jobs: 0, max_mb: 1.5}\n",
])
def test_the_settings_in_effect_give_the_same_config(text: str) -> None:
    config = parse_config(text)
    settings = effective_settings(config)
    assert parse_config(yaml.safe_dump(settings)) == config
    assert len(config.step_rules) == len(settings["step_rules"]) + (
        0 if settings["replace_default_step_rules"] else len(DEFAULT_STEP_RULES))


def test_a_name_that_begins_with_an_emoji_is_read_from_its_first_word() -> None:
    """ROCm/TransformerEngine begins each step's name with an emoji (`📦 Build wheel inside container`, `⬆️ Upload logs
    on failure`): no rule read past it, so its build was other and its uploads setup. The rules read the name from its
    first word too; a repository's rule written with the emoji still takes it, and one without it too."""
    defaults = RepoConfig()
    assert defaults.classify("\U0001f4e6 Build wheel inside container") == "setup"
    assert defaults.classify("\u2b06\ufe0f Upload logs on failure", action=True) == "other"
    assert defaults.classify("\U0001f468\u200d\U0001f469\u200d\U0001f467 Run tests") == "test"  # (joined emoji)
    assert defaults.classify("\U0001f4e6") == "other"  # (nothing after it: the name itself)
    assert defaults.classify("\u00e9t\u00e9 build") == "other"  # (a letter is no decoration)
    # review147 z07: a keycap, a bullet
    assert defaults.classify("1\ufe0f\u20e3 Build wheel") == defaults.classify("\u2022 Build wheel") == "setup"
    assert defaults.classify("1 Build wheel") == "other"
    # review147 z04: a build or an install that ends in `upload`/`save` is setup; a check after the tests is not
    assert defaults.classify("Build and upload") == defaults.classify("Pull image and save") == "setup"
    assert defaults.classify("Post-test worker check") == "other"
    # review148 a07
    assert defaults.classify("Download results and upload") == "other"
    assert defaults.classify("Post-install GPU availability check") == "setup"
    assert defaults.classify("\u2139\ufe0f Install dependencies") == "setup"
    assert defaults.classify("Coverage comment", action=True) == "other"
    ours = parse_config("step_rules: [{pattern: '^\U0001f4e6 Build', category: other}, {pattern: '^Ship', "
                        "category: test}]\n")
    assert ours.classify("\U0001f4e6 Build wheel inside container") == "other"
    assert ours.classify("\U0001f6a2 Ship it") == "test"
