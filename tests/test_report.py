"""Report text: names from jobs and steps cannot mention, inject HTML or forge markers."""

from __future__ import annotations

from bot.analysis import analyze
from bot.config import RepoConfig
from bot.publish import mark_stale, read_state
from bot.report import MARKER, md_escape, to_markdown
from tests.sglang_history import rocm720_history


def test_hostile_job_names_are_inert(sglang_before: dict[str, str]) -> None:
    bundles = rocm720_history()
    evil = "x @octocat <img src=x onerror=alert(1)> <!-- foldbot:report --> [link](http://e) | `code` *b*"
    unit = next(j for j in bundles[-1]["jobs"] if j["name"].startswith("multimodal-gen-unit-test"))
    unit["name"] = evil
    unit["labels"] = ["linux-mi300-1gpu-sglang"]
    body = to_markdown(analyze(sglang_before, bundles, RepoConfig()), state={"x": "--> <!--"})
    assert body.count(MARKER) == 1 and body.startswith(MARKER)
    assert "@octocat" not in body and "@\u200boctocat" in body
    assert "<img" not in body and "&lt;img" in body
    assert "[link](http://e)" not in body
    assert body.count("<!--") == 2  # the marker and the state block, nothing else
    assert read_state(body) == {"x": "--> <!--"}


def test_md_escape() -> None:
    assert md_escape("a|b <c> @d & e") == "a\\|b &lt;c&gt; @\u200bd &amp; e"


def test_stale_mark_is_idempotent() -> None:
    body = f"{MARKER}\n### title\n\ntext\n"
    once = mark_stale(body, "a" * 40, "b" * 40)
    assert once == f"{MARKER}\n> **Stale:** as of `aaaaaaaaaaaa`; a new run is pending for `bbbbbbbbbbbb`.\n\n### title\n\ntext\n"
    twice = mark_stale(once, "a" * 40, "c" * 40)
    assert twice.count("**Stale:**") == 1 and "`cccccccccccc`" in twice


def test_provisional_says_the_configured_min_samples(sglang_before: dict[str, str]) -> None:
    bundles = rocm720_history()[:4]
    body = to_markdown(analyze(sglang_before, bundles, RepoConfig(min_samples=6)))
    assert "*(provisional: fewer than 6 runs)*" in body and "fewer than 3 runs" not in body
    assert "*(provisional" not in to_markdown(analyze(sglang_before, bundles, RepoConfig(min_samples=4)))


def test_reasons_keep_their_code_spans_and_stay_inert() -> None:
    from bot.report import md_text

    assert md_text("set `logs: {fetch: true}` in x_y") == "set `logs: {fetch: true}` in x\\_y"
    assert md_text("job `a @b` and <c>") == "job `a @\u200bb` and &lt;c&gt;"
    assert md_text("odd ` tick *x*") == "odd \\` tick \\*x\\*"
