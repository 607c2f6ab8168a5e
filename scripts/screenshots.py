"""Screenshots of foldbot's dashboard issue and of a PR comment, as GitHub shows them.

    make screenshots            # or: .venv/bin/python scripts/screenshots.py [--out DIR]

The reports are the App's own (the SGLang current-lane case of the tests when
../shared/fixtures is there, else the embedded example), rendered the way GitHub
renders a comment: GitHub-flavoured markdown (`marked`, GFM tables), GitHub's
markdown stylesheet (`github-markdown-css`) at the 880-px width of a comment, and
mermaid for the chart; then headless Chromium takes the picture. The JavaScript
comes from the npm registry into build/screenshots (`npm install`), Chromium from
Debian (`apt-get install chromium`). Writes DIR/dashboard.png and DIR/pr-comment.png
(default docs/screenshots) and the HTML beside them, and prints what it wrote.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUILD = ROOT / "build" / "screenshots"
PACKAGES = ("mermaid@11", "marked@15", "github-markdown-css@5")
WIDTH = 880  # a GitHub comment's width

PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<link rel="stylesheet" href="{css}">
<style>body {{ margin: 0; background: #fff; }} .markdown-body {{ box-sizing: border-box; width: {width}px;
padding: 16px; border: 1px solid #d0d7de; border-radius: 6px; }}</style>
<script src="{marked}"></script><script src="{mermaid}"></script></head>
<body><article class="markdown-body" id="body"></article>
<script>
const source = {source};
const renderer = new marked.Renderer();
const code = renderer.code.bind(renderer);
renderer.code = (token) => token.lang === "mermaid"
  ? '<pre class="mermaid">' + token.text.replace(/</g, "&lt;") + '</pre>' : code(token);
document.getElementById("body").innerHTML = marked.parse(source, {{gfm: true, renderer}});
mermaid.initialize({{startOnLoad: false, securityLevel: "strict"}});
mermaid.run({{querySelector: ".mermaid"}});
</script></body></html>
"""


def reports() -> tuple[str, str]:
    """The dashboard and a PR comment of one analysis."""
    from bot.config import RepoConfig
    from bot.logs import parse_log
    from bot.report import to_markdown
    from bot.reporting import PR_REPORT_TITLE, skipped_note
    from bot.analysis import analyze

    fixtures = ROOT.parent / "shared" / "fixtures" / "sglang" / "workflows"
    if fixtures.is_dir():
        from tests.sglang_current import LANES, history, workflow_text

        bundles, logs = history("rocm720")
        files = {LANES[lane][0]: workflow_text(lane) for lane in LANES}
        analysis = analyze(files, bundles, RepoConfig(), {k: parse_log(v) for k, v in logs.items()})
    else:
        from bot.__main__ import example_root

        root = example_root()
        runs = [json.loads(p.read_text()) for p in sorted((root / "runs").glob("*.json"))]
        files = {p.relative_to(root / "repo").as_posix(): p.read_text()
                 for p in sorted((root / "repo" / ".github" / "workflows").glob("*.yml"))}
        analysis = analyze(files, runs, RepoConfig())
    checks = "`git apply --check` passed; the patched files validate against the GitHub workflow schema"
    dashboard = to_markdown(analysis, checks=checks, state={"example": True})
    comment = to_markdown(analysis, checks=checks, state={"example": True}, title=PR_REPORT_TITLE,
                          skipped_note=skipped_note(analysis), dashboard="https://github.com/OWNER/REPO/issues/1")
    return dashboard, comment


def ensure_tools() -> str:
    if not (BUILD / "node_modules" / "mermaid").is_dir():
        BUILD.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", *PACKAGES], cwd=BUILD, check=True)
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        sys.exit("screenshots: no Chromium; install it with `apt-get install chromium` (Debian)")
    return browser


def shoot(browser: str, markdown: str, html: Path, png: Path) -> None:
    modules = BUILD / "node_modules"
    html.write_text(PAGE.format(css=(modules / "github-markdown-css" / "github-markdown-light.css").as_uri(),
                                marked=(modules / "marked" / "lib" / "marked.umd.js").as_uri(),
                                mermaid=(modules / "mermaid" / "dist" / "mermaid.min.js").as_uri(),
                                source=json.dumps(markdown), width=WIDTH), encoding="utf-8")
    height = 300 + 16 * markdown.count("\n")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--allow-file-access-from-files", f"--window-size={WIDTH + 32},{min(height, 6000)}",
                    "--virtual-time-budget=8000", f"--screenshot={png}", html.as_uri()],
                   check=True, capture_output=True, timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    out = Path(parser.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    browser = ensure_tools()
    dashboard, comment = reports()
    for name, markdown in (("dashboard", dashboard), ("pr-comment", comment)):
        shoot(browser, markdown, out / f"{name}.html", out / f"{name}.png")
        print(f"{out / name}.png ({(out / f'{name}.png').stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
