"""foldbot's command line: `analyze` (offline), `fetch` (a repository's runs and logs), `serve` (the GitHub App), `manifest`,
`config check` (a repository's .github/foldbot.yml), `register` (the App, through GitHub's manifest flow), `comment` (a report as a PR comment, for the GitHub Action)."""

from __future__ import annotations

import argparse
import faulthandler
import json
import re
import socket
import sys
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from . import __version__
from .analysis import AnalysisError, Unmeasured, analyze
from .config import (CONFIG_PATH, DEFAULT_STEP_RULES, WORKFLOWS_DIR, ConfigError, RepoConfig, effective_settings,
                     parse_config)
from .edit import EditError, VerificationError
from .journal import JournalUnavailable
from .logs import LogError, ShardLog, blank, parse_log
from .report import to_json, to_markdown
from .timing import BundleError, workflow_path_of
from .verify import PatchCheckError, check_patch
from .workflow import WorkflowError


class CliError(Exception):
    """An error the user can fix; printed as one line."""


def example_root() -> Path:
    return Path(str(resources.files("bot.example")))


def workflow_paths(root: Path) -> list[str] | None:
    """The workflow files under a repo root, by repo-relative path; None: it has no workflows directory."""
    workflows = root / WORKFLOWS_DIR
    if not workflows.is_dir():
        return None
    return sorted(p.relative_to(root).as_posix() for p in workflows.iterdir()
                  if p.suffix in (".yml", ".yaml") and p.is_file())


def lane_files(root: Path, config: RepoConfig, also: Sequence[str] = ()) -> dict[str, str]:
    """The lane workflow files under a repo root (plus `also`), by repo-relative path."""
    paths = workflow_paths(root)
    if paths is None:
        raise CliError(f"{root}: has no {WORKFLOWS_DIR} directory")
    chosen = [p for p in paths if config.is_lane(p)]
    for extra in also:
        if extra not in chosen:
            if not (root / extra).is_file():
                raise CliError(f"{root}: the runs are of {extra}, which is not in this repo root")
            chosen.append(extra)
    return {p: read_text(root / p) for p in chosen}


def read_text(path: Path) -> str:
    """A file the user named, as UTF-8 text (as bytes first: `read_text` would turn a Windows-written
    file's CRLF into LF, and a patch made of that text would not apply to the file). What stops it is
    one CLI error line: no such file, a directory, no permission, not UTF-8."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None


def read_bytes(path: Path) -> bytes:
    """A file the user named, as it is; one CLI error line when it cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: a directory, not a file") from None
    except OSError as exc:
        raise CliError(f"{path}: cannot be read: {exc.strerror or exc}") from None


def _load_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None


def _parse_logs(specs: Sequence[str], bundles: Sequence[Any] = ()) -> tuple[dict[int, ShardLog], list[Unmeasured]]:
    """The `--logs JOB_ID=FILE` files, parsed; and a line for each that gives foldbot nothing
    (no per-file time in it, or a job id in none of the runs)."""
    logs: dict[int, ShardLog] = {}
    problems: list[Unmeasured] = []
    known = {job.get("id") for b in bundles if isinstance(b, dict)
             for job in (b.get("jobs") or []) if isinstance(job, dict)}
    for spec in specs:
        job_id, sep, file = spec.partition("=")
        if not sep or not job_id.strip().isdigit() or not file:
            raise CliError(f"--logs takes JOB_ID=FILE with a numeric job id, not {spec!r}")
        data = read_bytes(Path(file))  # parsed as bytes: its odd bytes are no reason to refuse its times
        try:
            log = parse_log(data)
        except LogError as exc:
            raise CliError(f"{file}: {exc}") from None
        if blank(data):  # (a runner that printed nothing, a download that came back empty)
            problems.append(Unmeasured(
                f"--logs {spec}", "it is empty, so its shard's run rests on shard times",
                "pass the job's whole log (GitHub's \u201cDownload log archive\u201d, or `foldbot fetch`); an empty one "
                "is a runner that printed nothing: did its test step start?"))
        elif log.empty:
            problems.append(Unmeasured(
                f"--logs {spec}", "no per-file test time in it (none of the formats in the README's 'Log formats')",
                "pass the log of a test step that runs SGLang's run_suite.py (or add its format), or leave it out"))
        elif known and int(job_id) not in known:
            problems.append(Unmeasured(
                f"--logs {spec}", f"job {int(job_id)} is in none of the given runs, so its times were not used",
                "use the job's `id` from the run bundle's `jobs` (the number in its .../job/<id> link)"))
        logs[int(job_id)] = log
    return logs, problems


def _github_api(repo: str) -> tuple[Any, Any]:
    """A RepoAPI for `repo` from GITHUB_TOKEN (and GITHUB_API_URL), with its session to close."""
    import os

    import aiohttp

    from .api import RepoAPI
    from .github import Credentials, GitHubPool

    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo or ""):
        raise CliError(f"--repo takes OWNER/NAME, not {repo!r}")
    token = os.environ.get("GITHUB_TOKEN")
    if not token:
        raise CliError("set GITHUB_TOKEN to a token that can read the repository's contents and Actions")
    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
    pool = GitHubPool(session, Credentials(token=token),
                      base_url=os.environ.get("GITHUB_API_URL") or "https://api.github.com")
    return RepoAPI(pool.for_installation(None), repo), session


def _with_github(repo: str, work: Callable[[Any], Awaitable[Any]]) -> Any:
    """`work(api)` with a RepoAPI for `repo` (GITHUB_TOKEN), its session closed after; a
    GitHub failure is one CLI error line."""
    import asyncio

    from .github import GitHubError

    async def go() -> Any:
        api, session = _github_api(repo)
        try:
            return await work(api)
        finally:
            await session.close()

    try:
        return asyncio.run(go())
    except GitHubError as exc:
        raise CliError(f"GitHub: {exc}") from None


def _fetch(repo: str, out: Path, workflows: Sequence[str], runs: int, max_logs: int) -> Any:
    from .fetch import FetchError, fetch

    try:
        return _with_github(repo, lambda api: fetch(api, out, workflows=workflows, runs=runs, max_logs=max_logs,
                                                    say=lambda line: print(line, file=sys.stderr)))
    except FetchError as exc:
        raise CliError(str(exc)) from None


def cmd_fetch(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise CliError("--runs must be at least 1")
    fetched = _fetch(args.repo, Path(args.out), args.workflow or (), args.runs, args.max_logs)
    print(f"wrote {sum(len(r) for r in fetched.runs.values())} run bundles and {len(fetched.logs)} logs to "
          f"{fetched.out}; analyse them with: foldbot analyze --fetched {fetched.out}")
    return 0


def _from_fetched(out: Path, workflow: str | None) -> tuple[Path, list[Path], list[str], list[Unmeasured]]:
    """The repo root, run bundles and log specs a fetch wrote, for one of its workflows
    (`workflow`, else the one whose newest run is newest), and a line for each of its jobs'
    logs the fetch could not read (said on stderr then; the report says it too)."""
    from .fetch import MANIFEST

    manifest_path = out / MANIFEST
    if not manifest_path.is_file():
        raise CliError(f"{out}: not a directory `foldbot fetch` wrote (no {MANIFEST})")
    manifest = _load_json(manifest_path)
    runs: dict[str, list[str]] = {p: r for p, r in manifest.get("runs", {}).items() if r}
    if not runs:
        raise CliError(f"{out}: the fetch found no completed run")
    if workflow:
        path = workflow if "/" in workflow else f".github/workflows/{workflow}"
        if path not in runs:
            raise CliError(f"{out}: no runs of {path}; fetched: {', '.join(sorted(runs))}")
    else:
        path = max(runs, key=lambda p: _load_json(out / runs[p][-1])["workflow_run"].get("created_at") or "")
    bundles = [out / r for r in runs[path]]
    # the logs of this workflow's jobs: a fetch of several lanes holds the others' too, which are not missing here
    jobs = {str(job.get("id")): str(job.get("name")) for bundle in bundles for job in _jobs_of(_load_json(bundle))
            if isinstance(job, dict)}
    specs = [f"{job_id}={out / file}" for job_id, file in manifest.get("logs", {}).items() if str(job_id) in jobs]
    failed = manifest.get("failed_logs") or {}
    unread = [f"job {job_id} ({jobs[str(job_id)]}): {why}" for job_id, why in
              (sorted(failed.items()) if isinstance(failed, dict) else []) if str(job_id) in jobs]
    problems = [Unmeasured(  # (one line: a lane past GitHub's retention is every shard's log of every run)
        "fetched logs", f"the fetch could not read {len(unread)} shard log{'s' if len(unread) != 1 else ''}: "
        + "; ".join(unread[:3]) + (f"; and {len(unread) - 3} more (fetch.json names them)" if len(unread) > 3 else "")
        + "; their runs rest on shard times",
        "a log GitHub no longer keeps is gone (its retention); one over the limit needs `logs: {max_mb: N}` in "
        ".github/foldbot.yml, which the fetch reads up to; others: fetch again")] if unread else []
    return out / "repo", bundles, specs, problems


def _jobs_of(bundle: Any) -> list[Any]:
    """A run bundle's jobs, or none when it has no list of them (the analysis says what is wrong)."""
    jobs = bundle.get("jobs") if isinstance(bundle, dict) else None
    return jobs if isinstance(jobs, list) else []


def cmd_analyze(args: argparse.Namespace) -> int:
    if (args.repo or args.fetched) and (args.repo_root or args.run or args.logs):
        raise CliError("--repo and --fetched bring their own files: leave out --repo-root, --run and --logs")
    if args.repo and args.fetched:
        raise CliError("give --repo (fetch now) or --fetched (what a fetch wrote), not both")
    if args.repo:
        import tempfile

        out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="foldbot-fetch-"))
        _fetch(args.repo, out, [args.workflow] if args.workflow else (), args.runs, args.max_logs)
        args.fetched = str(out)
    if args.fetched:
        root, fetched_runs, fetched_logs, fetch_problems = _from_fetched(Path(args.fetched), args.workflow)
        args.repo_root, args.run, args.logs = str(root), [str(p) for p in fetched_runs], fetched_logs
    elif args.workflow:
        raise CliError("--workflow goes with --repo or --fetched")
    if args.repo_root is None and args.run:
        raise CliError("--run needs --repo-root: the repository the runs belong to")
    if args.repo_root is not None and not args.run:
        raise CliError("--repo-root needs --run: the runs of that repository to analyse "
                       "(without both, foldbot analyses its embedded example)")
    root = Path(args.repo_root) if args.repo_root else example_root() / "repo"
    if not root.is_dir():
        raise CliError(f"{root}: not a directory")
    run_paths = [Path(p) for p in args.run] if args.run else sorted((example_root() / "runs").glob("*.json"))
    log_specs = list(args.logs or [])
    if not args.run and not args.logs:
        log_specs = [f"{p.stem}={p}" for p in sorted((example_root() / "logs").glob("*.log"))]
    config_file = root / CONFIG_PATH
    config = parse_config(read_text(config_file) if config_file.is_file() else None)
    patch_out = Path(args.patch_out) if args.patch_out else None
    if patch_out is not None and not patch_out.parent.is_dir():  # said now, not after the analysis
        raise CliError(f"--patch-out {patch_out}: no directory {patch_out.parent}")
    bundles = [_load_json(p) for p in run_paths]
    for path, bundle in zip(run_paths, bundles):
        if not isinstance(bundle, dict):
            raise CliError(f"{path}: a run bundle is a JSON object with `workflow_run` and `jobs`")
    measured = {workflow_path_of(b, str(p)) for p, b in zip(run_paths, bundles)}
    if len(measured) > 1:
        raise CliError(f"the bundles come from several workflows ({', '.join(sorted(measured))}); give one workflow's runs")
    files = lane_files(root, config, sorted(measured))
    logs, log_problems = _parse_logs(log_specs, bundles)
    if args.fetched:
        log_problems += fetch_problems
    from .repo import shard_callee_paths

    called = {}
    for path in shard_callee_paths(files):
        try:
            called[path] = (root / path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):  # no such file, or not text: its jobs' timeout is then unknown
            continue
    analysis = analyze(files, bundles, config, logs, log_problems, called)
    checks = None
    if analysis.patch and not args.no_checks:
        checks = check_patch(analysis.patch, analysis.edits, files).summary()
    if args.format == "json":
        print(json.dumps(to_json(analysis, checks), indent=2))
    else:
        print(to_markdown(analysis, checks=checks), end="")
    if patch_out is not None:  # after the report: a file that cannot be written does not lose it
        try:
            patch_out.write_bytes(analysis.patch.encode("utf-8"))
        except OSError as exc:
            raise CliError(f"--patch-out {patch_out}: cannot be written: {exc.strerror or exc}") from None
    return 0


def _freeze_heap() -> None:
    """What the imports made lives as long as the process: out of the garbage collector's
    sight (gc.freeze), so that a full collection does not walk it again and again (a
    pause that shows in the answers' p99)."""
    import gc

    gc.collect()
    gc.freeze()


def cmd_serve(args: argparse.Namespace) -> int:
    import logging
    import os

    from aiohttp import web

    from handlers import router

    from .server import create_app
    from .settings import Settings, SettingsError

    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    if args.port is not None:
        settings = replace(settings, port=args.port)
    sock = _listen(settings.host, settings.port)  # first: a port in use stops it before anything has started
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    faulthandler.enable()  # a process killed by a fault (SIGBUS: a file SQLite maps made unwritable) says where
    _freeze_heap()
    app = create_app(settings, router)

    async def stopping(app: web.Application) -> None:
        """Once stopping, another SIGTERM or SIGINT (a second `docker stop`, a supervisor's
        repeat) does not cut the drain short: aiohttp's handler would end it at once, before
        what this process holds is handed back or its outcomes written. kill -9 still stops it."""
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, logging.getLogger("foldbot").warning,
                                    "shutdown: already stopping (signal %s ignored; the drain goes on for up to %g s)",
                                    signal.Signals(signum).name, settings.drain_seconds)

    app.on_shutdown.insert(0, stopping)
    # A listen backlog for GitHub's bursts (aiohttp's default, 128, drops connections past it: a 1 s retry)
    web.run_app(app, sock=sock, backlog=1024, access_log=None,
                shutdown_timeout=settings.drain_seconds,
                print=lambda message: logging.getLogger("foldbot").info(message))
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """The server's listening socket on HOST and PORT, or one error line saying why not (a port in
    use, a host that does not resolve or is not this machine's): a traceback it was, after the
    worker process had started."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        return socket.create_server((host, port), family=family, backlog=1024)
    except OSError as exc:  # (socket.gaierror is one)
        raise CliError(f"cannot listen on {host}:{port} (HOST, PORT): {exc.strerror or exc}") from None


def cmd_work(args: argparse.Namespace) -> int:
    """The worker process `foldbot serve` starts (`bot.workerproc`); not run by hand."""
    import asyncio
    import logging
    import os

    from handlers import router

    from .settings import Settings, SettingsError
    from .workerproc import run_worker

    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    faulthandler.enable()
    asyncio.run(run_worker(settings, router))
    return 0


def cmd_manifest(args: argparse.Namespace) -> int:
    import yaml

    source = Path(__file__).resolve().parent.parent / "app.yaml"
    if not source.is_file():
        raise CliError(f"{source}: the App manifest is not there (run foldbot from its checkout)")
    manifest = yaml.safe_load(source.read_text(encoding="utf-8"))
    if args.url:
        base = args.url.rstrip("/")
        manifest["url"] = base
        manifest["hook_attributes"]["url"] = f"{base}/webhook"
        manifest["redirect_url"] = f"{base}/"
    print(json.dumps(manifest, indent=2))
    return 0


def cmd_register(args: argparse.Namespace) -> int:
    import asyncio
    import os

    from .register import RegisterError, check_url, github_urls, register

    github_url, api_url = github_urls(os.environ)
    try:
        check_url(args.url)  # before anything is served
        registered = asyncio.run(register(
            url=args.url, out=Path(args.out), org=args.org, read_only=args.read_only, name=args.name, port=args.port,
            timeout=args.timeout, github_url=github_url, api_url=api_url,
            say=lambda line: print(line, flush=True)))
    except RegisterError as exc:
        raise CliError(str(exc)) from None
    print(f"Registered the GitHub App {registered.name} (id {registered.app_id}): {registered.html_url}")
    print(f"Wrote {registered.key_path} (its private key) and {registered.env_path} (mode 600).")
    print(f"Install it on your repositories: {registered.install_url}")
    print(f"Then run it: set -a; . {registered.env_path}; set +a; foldbot serve")
    return 0


def cmd_comment(args: argparse.Namespace) -> int:
    """The report in FILE as foldbot's one comment on the PR: created, or edited in place."""
    from .publish import upsert_comment
    from .report import MARKER

    if args.pr < 1:
        raise CliError(f"--pr takes a pull request number, not {args.pr}")
    body = read_text(Path(args.body_file)).replace("\r\n", "\n")
    if MARKER not in body:
        body = f"{MARKER}\n{body}"

    async def post(api: Any) -> Any:  # foldbot's comment is the token's own: its account, unless told
        return await upsert_comment(api, args.pr, body, args.login or await api.gh.pool.bot_login())

    written = _with_github(args.repo, post)
    print(f"{written.action} the report comment on #{args.pr}: {written.url or written.number}")
    return 0


def cmd_config_check(args: argparse.Namespace) -> int:
    """`.github/foldbot.yml` read as the App reads it: `ok` and the settings in effect (in the
    file's own shape), or each problem on a line of its own and exit 2."""
    import yaml

    root = Path(args.repo_root)
    if not root.is_dir():
        raise CliError(f"{root}: not a directory")
    path = root / CONFIG_PATH
    text = read_text(path) if path.is_file() else None
    try:
        config = parse_config(text)
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"foldbot: error: {path}: {problem}", file=sys.stderr)
        return 2
    settings = effective_settings(config)
    print(f"ok: {path}" if text is not None else f"ok: there is no {path}, so foldbot's defaults apply")
    print(yaml.safe_dump(settings, sort_keys=False, default_flow_style=None, width=1000), end="")
    if not settings["replace_default_step_rules"]:
        print(f"# plus foldbot's {len(DEFAULT_STEP_RULES)} default step rules, tried after step_rules")
    for warning in _unmatched(root, config, settings["step_rules"]):
        print(f"foldbot: warning: {path}: {warning}", file=sys.stderr)
    return 0


def _unmatched(root: Path, config: RepoConfig, own_rules: list[dict[str, str]]) -> list[str]:
    """What the settings match nothing of in this checkout: `lanes` no workflow file, a step rule
    of the file's own no step name of the lane files (as written; a name made with `${{ }}` is
    matched as written). Valid settings all the same: warnings, not errors."""
    from .config import StepRule
    from .workflow import WorkflowError, parse_workflow

    paths = workflow_paths(root)
    if paths is None:
        return [f"{root} has no {WORKFLOWS_DIR} directory to check `lanes` and `step_rules` against"]
    lanes = [p for p in paths if config.is_lane(p)]
    if not lanes:
        return [f"`lanes` ({', '.join(config.lanes)}) matches none of the {len(paths)} workflow files in "
                f"{WORKFLOWS_DIR}: foldbot would analyse no run"]
    names: set[str] = set()
    for lane in lanes:
        try:
            workflow = parse_workflow(read_text(root / lane), lane)
        except (WorkflowError, CliError):
            continue  # (its own error comes with the analysis)
        names.update(step.name for job in workflow.jobs.values() for step in job.steps)
    return [f"step_rules[{i}] (`{rule['pattern']}`) matches no step name of the lanes ({len(names)} names): a rule "
            f"matches from the start of the name, case-sensitively (`.*{rule['pattern']}` searches, `(?i)` ignores case)"
            for i, rule in enumerate(own_rules) if not any(StepRule(rule["pattern"], rule["category"]).matches(n) for n in names)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="foldbot", description=__doc__)
    parser.add_argument("--version", action="version", version=f"foldbot {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("analyze", help="measure setup share and print a report with a verified patch")
    a.add_argument("--repo-root", help="repository root holding .github/workflows (default: the embedded example)")
    a.add_argument("--run", action="append", metavar="BUNDLE.json",
                   help="a run bundle {workflow_run, jobs}; repeat for history (default: the embedded example's runs)")
    a.add_argument("--logs", action="append", metavar="JOB_ID=FILE", help="a job log with per-file test times")
    a.add_argument("--format", choices=("markdown", "json"), default="markdown")
    a.add_argument("--patch-out", metavar="FILE", help="also write the patch to FILE")
    a.add_argument("--no-checks", action="store_true", help="skip git apply / schema / actionlint checks")
    a.add_argument("--repo", metavar="OWNER/NAME", help="fetch the repository's lanes, runs and logs first (GITHUB_TOKEN)")
    a.add_argument("--fetched", metavar="DIR", help="analyse what `foldbot fetch` wrote to DIR")
    a.add_argument("--workflow", metavar="FILE", help="with --repo / --fetched: the lane whose runs to analyse")
    a.add_argument("--out", metavar="DIR", help="with --repo: where to keep what is fetched (default: a new temp dir)")
    a.add_argument("--runs", type=int, default=10, help="with --repo: completed runs per lane (default 10)")
    a.add_argument("--max-logs", type=int, default=400, help="with --repo: shard logs to read at most (default 400)")
    a.set_defaults(func=cmd_analyze)
    f = sub.add_parser("fetch", help="download a repository's lane files, run bundles and shard logs (GITHUB_TOKEN)")
    f.add_argument("--repo", required=True, metavar="OWNER/NAME")
    f.add_argument("--workflow", action="append", metavar="FILE", help="a workflow file to fetch runs of (default: the lanes)")
    f.add_argument("--runs", type=int, default=10, help="completed runs per workflow (default 10)")
    f.add_argument("--max-logs", type=int, default=400, help="shard logs to read at most (default 400)")
    f.add_argument("--out", required=True, metavar="DIR")
    f.set_defaults(func=cmd_fetch)
    s = sub.add_parser("serve", help="run the GitHub App's webhook server (settings from the environment)")
    s.add_argument("--port", type=int, help="overrides PORT")
    s.set_defaults(func=cmd_serve)
    w = sub.add_parser("work", help="the worker process `serve` starts (internal)")
    w.set_defaults(func=cmd_work)
    m = sub.add_parser("manifest", help="print the GitHub App manifest (app.yaml) as JSON")
    m.add_argument("--url", help="the public base URL foldbot will serve at")
    m.set_defaults(func=cmd_manifest)
    r = sub.add_parser("register", help="register the GitHub App through GitHub's manifest flow (a local page)")
    r.add_argument("--url", required=True, help="the public https:// base URL foldbot will serve at (webhooks: URL/webhook)")
    r.add_argument("--org", metavar="ORG", help="register the App for this organization (default: your account)")
    r.add_argument("--read-only", action="store_true",
                   help="report-only permissions: no actions/contents/workflows write (no /dispatch, no /fold approve)")
    r.add_argument("--name", help="the App's name (unique on GitHub; default: app.yaml's, editable on GitHub's page)")
    r.add_argument("--out", default=".", metavar="DIR", help="where to write <slug>.pem and foldbot.env (default: .)")
    r.add_argument("--port", type=int, default=0, help="the local page's port on 127.0.0.1 (default: any free one)")
    r.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for GitHub's answer (default 900)")
    r.set_defaults(func=cmd_register)
    pc = sub.add_parser("comment", help="post or update the report as foldbot's comment on a PR (GITHUB_TOKEN)")
    pc.add_argument("--repo", required=True, metavar="OWNER/NAME")
    pc.add_argument("--pr", required=True, type=int, metavar="NUMBER")
    pc.add_argument("--body-file", required=True, metavar="FILE", help="the report (markdown), e.g. from foldbot analyze")
    pc.add_argument("--login", help="whose comment is foldbot's (default: the token's own account, as GitHub names "
                                    "it: github-actions[bot] for a job's GITHUB_TOKEN, <app-slug>[bot] for an App's, "
                                    "the user's for a personal token)")
    pc.set_defaults(func=cmd_comment)
    c = sub.add_parser("config", help="check the repository's .github/foldbot.yml")
    check = c.add_subparsers(dest="action", required=True).add_parser(
        "check", help="print the settings in effect, or every problem of the file (exit 2)")
    check.add_argument("--repo-root", default=".", help="the repository's checkout (default: the current directory)")
    check.set_defaults(func=cmd_config_check)
    return parser


_USER_ERRORS = (CliError, AnalysisError, BundleError, ConfigError, WorkflowError, EditError, VerificationError,
                PatchCheckError, LogError, JournalUnavailable)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except _USER_ERRORS as exc:
        print(f"foldbot: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
