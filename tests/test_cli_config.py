"""`foldbot config check`, `foldbot --version` and the version of the JSON output's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot import __version__
from bot.__main__ import main
from bot.config import CONFIG_PATH, parse_config


def write_config(root: Path, text: str) -> Path:
    path = root / CONFIG_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_prints_ok_and_the_settings_in_effect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "step_rules: [{pattern: 'Test RCCL', category: test}]\nfold: {max_test_minutes: 20}\nlogs: {max_mb: 8}\n"
    path = write_config(tmp_path, text)
    assert main(["config", "check", "--repo-root", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert err == (f"foldbot: warning: {path}: {tmp_path} has no .github/workflows directory to check `lanes` and "
                   "`step_rules` against\n")
    first, settings = out.split("\n", 1)
    assert first == f"ok: {path}"
    assert "fold: {max_test_minutes: 20.0, min_setup_share: 0.5}\n" in settings
    assert "# plus foldbot's" in settings
    assert parse_config(settings) == parse_config(text)  # what it prints is the file's own shape


def test_the_current_directory_is_the_default_and_no_file_is_the_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["config", "check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: there is no {CONFIG_PATH}, so foldbot's defaults apply\n")
    assert parse_config(out.split("\n", 1)[1]) == parse_config(None)


def test_every_problem_is_a_line_with_a_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, "lane: [x]\nfold: {max_test_mins: 3, min_setup_share: 2}\n"
                                  "permissions: {aprove: admin}\nlogs: {max_job: 3}\nmin_samples: 0\n")
    assert main(["config", "check", "--repo-root", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"foldbot: error: {path}: {problem}" for problem in (
        "`lane` is not a setting; did you mean `lanes`?",
        "`fold.max_test_mins` is not a setting; did you mean `fold.max_test_minutes`?",
        "`fold.min_setup_share` must be a number from 0 to 1, not 2",
        "`min_samples` must be a whole number from 1 to 100, not 0",
        "`permissions.aprove` is not a setting; did you mean `permissions.approve`?",
        "`logs.max_job` is not a setting; did you mean `logs.max_jobs`?",
    )]


def test_broken_yaml_and_a_missing_root_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, "lanes: [\n")
    assert main(["config", "check", "--repo-root", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"foldbot: error: {path}: not valid YAML at line 2, column 1: "
                                       "expected the node content, but found '<stream end>'\n")
    assert main(["config", "check", "--repo-root", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err == f"foldbot: error: {tmp_path / 'nowhere'}: not a directory\n"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"foldbot {__version__}\n"


def test_the_json_output_leads_with_its_schema_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--format", "json", "--no-checks"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert next(iter(data)) == "schema_version"
    assert data["schema_version"] == 2


def test_settings_that_match_nothing_in_the_checkout_are_warned_about(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A step rule written to search (`RCCL`, `test rccl`) matched no step: rules match from the
    start of the name, case-sensitively, and `config check` said ok; `lanes` that match no workflow
    file were ok too (foldbot then analyses nothing). Still valid settings: warnings, exit 0."""
    from tests.sglang_current import LANES, workflow_text

    for path, _ in LANES.values():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(workflow_text("rocm720" if "rocm720" in path else "amd"))
    config = write_config(tmp_path, "step_rules:\n  - {pattern: RCCL, category: test}\n"
                                    "  - {pattern: Test RCCL, category: test}\n  - {pattern: test rccl, category: test}\n")
    assert main(["config", "check", "--repo-root", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    tail = ("matches no step name of the lanes (30 names): a rule matches from the start of the name, case-sensitively "
            "(`.*{0}` searches, `(?i)` ignores case)")
    assert err.splitlines() == [f"foldbot: warning: {config}: step_rules[0] (`RCCL`) " + tail.format("RCCL"),
                                f"foldbot: warning: {config}: step_rules[2] (`test rccl`) " + tail.format("test rccl")]
    write_config(tmp_path, "lanes: [.github/workflows/nightly-amd.yml]\n")
    assert main(["config", "check", "--repo-root", str(tmp_path)]) == 0
    assert capsys.readouterr().err == (
        f"foldbot: warning: {config}: `lanes` (.github/workflows/nightly-amd.yml) matches none of the 2 workflow files "
        "in .github/workflows: foldbot would analyse no run\n")
    write_config(tmp_path, "lanes: [pr-test-amd.yml, pr-test-amd-rocm720.yml]\n")  # bare names: files of that directory
    assert main(["config", "check", "--repo-root", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "lanes: [.github/workflows/pr-test-amd.yml, .github/workflows/pr-test-amd-rocm720.yml]\n" in out
