"""`foldbot analyze`: the embedded example, the JSON contract, and one clear line per error."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.__main__ import example_root, main
from tests.paths import BEFORE, ROOT
from tests.sglang_history import rocm720_history


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_the_embedded_example_prints_a_report_with_a_verified_patch() -> None:
    result = run_cli("analyze")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("<!-- foldbot:report -->\n### foldbot: AMD CI setup report\n")
    assert "**Fold** `unit-test-amd-rocm710` into shard part=0 of `integration-test-1-gpu-amd-rocm710`" in out
    assert "**Reshard** `integration-test-1-gpu-amd-rocm710` from 4 to 1 shards" in out
    assert "Estimate from per-file logs (1 run) and shard times (4 runs)." in out
    assert "```mermaid\n%%{init: {'themeVariables': {'xyChart': {'plotColorPalette': '#c0392b, #2e86c1'}}}}%%\nxychart-beta horizontal" in out
    assert "diff --git a/.github/workflows/pr-test-amd-rocm710.yml b/.github/workflows/pr-test-amd-rocm710.yml" in out
    assert "diff --git a/.github/workflows/pr-test-amd.yml b/.github/workflows/pr-test-amd.yml" in out
    assert "Verified: `git apply --check` passed" in out
    assert result.stderr == ""


def test_json_output_and_patch_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    patch_file = tmp_path / "fold.diff"
    assert main(["analyze", "--format", "json", "--patch-out", str(patch_file)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"jobs", "totals", "suggestions", "savings", "warnings", "patch", "patch_id"}
    job = data["jobs"][0]
    assert set(job) >= {"name", "workflow_job", "setup_seconds", "test_seconds", "other_seconds", "setup_share"}
    assert set(data["totals"]) >= {"setup_seconds", "test_seconds", "setup_share"}
    assert [(s["kind"], s["job"], s.get("into"), s.get("from"), s.get("to")) for s in data["suggestions"]] == [
        ("fold", "unit-test-amd-rocm710", "integration-test-1-gpu-amd-rocm710", None, None),
        ("reshard", "integration-test-1-gpu-amd-rocm710", None, 4, 1),
    ]
    assert data["savings"]["setup_cycles"] == 8
    assert patch_file.read_text() == data["patch"]
    repo = tmp_path / "repo"
    shutil.copytree(example_root() / "repo", repo)
    subprocess.run(["git", "apply", str(patch_file)], cwd=repo, check=True)


def _sglang_root(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "sglang"
    (root / ".github/workflows").mkdir(parents=True)
    for file in BEFORE.glob("*.yml"):
        shutil.copy(file, root / ".github/workflows" / file.name)
    args = []
    for bundle in rocm720_history():
        path = tmp_path / f"run-{bundle['workflow_run']['id']}.json"
        path.write_text(json.dumps(bundle))
        args += ["--run", str(path)]
    return root, args


def test_sglang_from_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, runs = _sglang_root(tmp_path)
    assert main(["analyze", "--repo-root", str(root), *runs, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {s["lane"]: s["setup_cycles"] for s in data["savings"]["per_lane"]} == {"rocm720": 2, "amd": 2}


@pytest.mark.parametrize("case,message", [
    ("missing", "no-such.json: no such file"),
    ("not-json", "not JSON"),
    ("broken-yaml", "pr-test-amd-rocm720.yml: not valid YAML at line 4, column 1"),
    ("other-workflow", "the runs are of .github/workflows/nightly.yml, which is not in this repo root"),
    ("mixed", "the bundles come from several workflows"),
    ("bad-logs", "--logs takes JOB_ID=FILE with a numeric job id, not 'x=y'"),
    ("run-without-root", "--run needs --repo-root"),
    ("root-without-run", "--repo-root needs --run: the runs of that repository to analyse "
                         "(without both, foldbot analyses its embedded example)"),
    # each of these was a Python traceback (exit 1); --patch-out's only after the whole analysis, its report lost
    ("run-is-a-directory", "runs: a directory, not a file"),
    ("log-is-a-directory", "runs: a directory, not a file"),
    ("not-utf8", "latin1.json: not UTF-8 text (byte 0xe9 at offset 13)"),
    ("config-not-utf8", "foldbot.yml: not UTF-8 text (byte 0xe9 at offset 5)"),
    ("patch-out-nowhere", "--patch-out {tmp}/no-such-dir/fold.patch: no directory {tmp}/no-such-dir"),
])
def test_errors_are_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str) -> None:
    root, runs = _sglang_root(tmp_path)
    args = ["analyze", "--repo-root", str(root), *runs]
    if case == "missing":
        args += ["--run", str(tmp_path / "no-such.json")]
    elif case == "not-json":
        (tmp_path / "bad.json").write_text("{nope")
        args += ["--run", str(tmp_path / "bad.json")]
    elif case == "broken-yaml":
        (root / ".github/workflows/pr-test-amd-rocm720.yml").write_text("name: x\njobs:\n  a: [\n")
    elif case in ("other-workflow", "mixed"):
        other = rocm720_history()[0]
        other["workflow_run"]["path"] = ".github/workflows/nightly.yml"
        (tmp_path / "other.json").write_text(json.dumps(other))
        args = (["analyze", "--repo-root", str(root), "--run", str(tmp_path / "other.json")] if case == "other-workflow"
                else args + ["--run", str(tmp_path / "other.json")])
    elif case == "bad-logs":
        args += ["--logs", "x=y"]
    elif case == "run-without-root":
        args = ["analyze", *runs]
    elif case == "root-without-run":
        args = ["analyze", "--repo-root", str(root)]
    elif case == "run-is-a-directory":  # (`foldbot fetch` writes a directory of bundles per lane)
        (tmp_path / "runs").mkdir()
        args += ["--run", str(tmp_path / "runs")]
    elif case == "log-is-a-directory":
        (tmp_path / "runs").mkdir()
        args += ["--logs", f"1={tmp_path / 'runs'}"]
    elif case == "not-utf8":
        (tmp_path / "latin1.json").write_bytes(b'{"name": "caf\xe9"}')
        args += ["--run", str(tmp_path / "latin1.json")]
    elif case == "config-not-utf8":
        (root / ".github/foldbot.yml").write_bytes(b"# caf\xe9\n")
    elif case == "patch-out-nowhere":
        args += ["--patch-out", str(tmp_path / "no-such-dir" / "fold.patch")]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("foldbot: error: ")
    assert message.format(tmp=tmp_path) in lines[0]


def test_a_patch_out_that_cannot_be_written_keeps_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report is printed before the patch is written: a path that cannot be written (here a
    directory) is one error line after it, not the loss of the analysis."""
    root, runs = _sglang_root(tmp_path)
    (tmp_path / "taken").mkdir()
    assert main(["analyze", "--repo-root", str(root), *runs, "--no-checks", "--patch-out", str(tmp_path / "taken")]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("<!-- foldbot:report -->\n### foldbot: AMD CI setup report\n")
    assert captured.err == f"foldbot: error: --patch-out {tmp_path / 'taken'}: cannot be written: Is a directory\n"


def test_logs_that_give_nothing_are_named_in_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, runs = _sglang_root(tmp_path)
    bundle = rocm720_history()[-1]
    shard = next(j["id"] for j in bundle["jobs"] if j["name"].startswith("multimodal-gen-test-2-gpu-amd-rocm720"))
    noise = tmp_path / "noise.log"
    noise.write_text("2026-08-17T10:00:00.0000000Z Pulling image rocm/sgl-dev ...\n"
                     "2026-08-17T10:41:00.0000000Z Status: Downloaded newer image\n")
    stray = tmp_path / "stray.log"
    stray.write_text("End (0/0):\nfilename='/sglang-checkout/test/registered/a.py', elapsed=61, estimated_time=60.0\n")
    args = ["analyze", "--repo-root", str(root), *runs, "--logs", f"{shard}={noise}", "--logs", f"999={stray}"]
    assert main([*args, "--format", "json"]) == 0
    unmeasured = {u["subject"]: u for u in json.loads(capsys.readouterr().out)["unmeasured"]}
    assert unmeasured[f"--logs {shard}={noise}"] == {
        "subject": f"--logs {shard}={noise}",
        "reason": "no per-file test time in it (none of the formats in the README's 'Log formats')",
        "fix": "pass the log of a test step that runs SGLang's run_suite.py (or add its format), or leave it out",
    }
    assert unmeasured[f"--logs 999={stray}"]["reason"] == "job 999 is in none of the given runs, so its times were not used"
    empty = tmp_path / "empty.log"  # (a runner that printed nothing: was said to print "none of the formats")
    empty.write_text("")
    assert main(["analyze", "--repo-root", str(root), *runs, "--logs", f"{shard}={empty}", "--format", "json"]) == 0
    (line,) = [u for u in json.loads(capsys.readouterr().out)["unmeasured"] if u["subject"] == f"--logs {shard}={empty}"]
    assert (line["reason"], line["fix"]) == (
        "it is empty, so its shard's run rests on shard times",
        "pass the job's whole log (GitHub's \u201cDownload log archive\u201d, or `foldbot fetch`); an empty one is a "
        "runner that printed nothing: did its test step start?")
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "#### Could not measure" in text
    assert f"- `--logs {shard}={noise}`: no per-file test time in it" in text


def test_a_crlf_lane_file_gets_a_patch_that_applies_to_it_in_a_git_checkout(tmp_path: Path) -> None:
    """The embedded example with its lane files saved with CRLF line ends (on Windows): the
    patch written by `--patch-out` applies to the checkout and keeps the CRLF."""
    repo = tmp_path / "repo"
    shutil.copytree(example_root() / "repo", repo)
    lanes = sorted((repo / ".github/workflows").glob("*.yml"))
    for lane in lanes:
        lane.write_bytes(lane.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    runs = [str(p) for p in sorted((example_root() / "runs").glob("*.json"))]
    patch_file = tmp_path / "fold.diff"
    args = ["analyze", "--repo-root", str(repo), "--patch-out", str(patch_file)]
    for run in runs:
        args += ["--run", run]
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    assert "Verified: `git apply --check` passed" in result.stdout
    subprocess.run(["git", "apply", str(patch_file)], cwd=repo, check=True, capture_output=True)
    for lane in lanes:
        text = lane.read_bytes()
        assert b"\n" not in text.replace(b"\r\n", b"")
    assert b"if: matrix.part == 0 && (success() || failure())\r\n" in (repo / ".github/workflows/pr-test-amd-rocm710.yml").read_bytes()
