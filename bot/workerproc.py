"""The work in a process of its own (`foldbot serve`, unless FOLDBOT_WORKER_PROCESS=no).

The web process verifies, checks, journals and answers; nothing else runs in its event
loop, so an answer never waits behind an analysis. It starts `python -m bot work` and
wakes it with a byte on its stdin for each journaled delivery; the worker takes the
work from the journal (the SQLite file both open, or Redis), as a process restarted
after a crash does. When the worker exits the web process starts it again (1 s, then
doubling up to 30 s) and `/health` says degraded meanwhile; nothing is lost, the
deliveries wait in the journal.

The worker ends when its stdin closes (the web process stopped, or died: even a
kill -9 closes the pipe) or on SIGTERM/SIGINT: it finishes what it holds, within
`drain_seconds`, and exits. A lock file in the data directory keeps one worker per
journal: a new one waits for the old one to finish.

Every 2 s the worker writes its metrics and its state (`worker.prom`, `worker.json`)
in the data directory; the web process's `/metrics` serves them merged with its own."""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import select
import signal
import sys
import time
from pathlib import Path

from gidgethub import routing

from .journal import JournalUnavailable
from .server import (RATE_LIMITED_SHOWN, SET_ASIDE_NAMED, AppState, connect, drain_work, new_state,
                     set_aside_problem, start_work, stop, unrecorded_problem)
from .settings import Settings

log = logging.getLogger("foldbot.worker")

#: How often the worker writes its metrics and state.
PUBLISH_SECONDS = 2.0
#: A worker whose state is older than this is reported as stuck.
STALE_SECONDS = 30.0
#: The worker's scheduling priority below the web process's (`nice`): on a busy machine the
#: web process's answers, which GitHub times out after 10 s, get the CPU first.
WORKER_NICENESS = 10
#: The longest line the web process reads from its worker as a report.
REPORT_LIMIT = 65536
#: Waits before starting a worker that exited: 1 s, doubling, at most this.
MAX_BACKOFF_SECONDS = 30.0


class WorkerLink:
    """The web process's side: starts the worker, wakes it, watches it, stops it."""

    def __init__(self, settings: Settings) -> None:
        assert settings.data_dir is not None
        self.settings = settings
        self.directory = settings.data_dir
        self.process: asyncio.subprocess.Process | None = None
        #: How the last worker process ended ("exit code -9: killed by SIGKILL"), once one has.
        self.ended: str | None = None
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._wake_pending = False
        self.started_at = time.time()
        self.spawn_error: str | None = None
        #: The running worker's last report on its stdout (see `publish`), and why the last one
        #: could not start (its last words before exit code 2).
        self.reported: dict[str, object] | None = None
        self.cannot_start: str | None = None

    async def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._spawned = asyncio.Event()
        self._task = asyncio.create_task(self._supervise())
        spawned = asyncio.create_task(self._spawned.wait())
        await asyncio.wait({self._task, spawned}, return_when=asyncio.FIRST_COMPLETED)
        spawned.cancel()

    async def _supervise(self) -> None:
        backoff = 1.0
        while not self._stopping:
            self.started_at = time.time()
            self.reported = None
            try:
                self.process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "work",
                                                                    stdin=asyncio.subprocess.PIPE,
                                                                    stdout=asyncio.subprocess.PIPE)
            except OSError as exc:  # no process could be made (memory, process or file limits)
                self.process, self.spawn_error = None, str(exc)
                log.error("the worker process could not be started: %s; trying again in %.0f s (the deliveries "
                          "wait in the journal)", exc, backoff)
                self._spawned.set()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                continue
            self.spawn_error = self.cannot_start = None
            self._spawned.set()
            listening = asyncio.create_task(self._listen(self.process))
            code = await self.process.wait()
            await listening  # (its last words, if any, are read by now: the pipe closed with the process)
            if self._stopping:
                return
            self.ended = self._ending(code)
            if time.time() - self.started_at > 60:
                backoff = 1.0
            log.error("the worker process is %s in %.0f s (its deliveries wait in the journal)",
                      self.status().removesuffix("; being started again") + "; it is started again", backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    async def _listen(self, process: asyncio.subprocess.Process) -> None:
        """Keep the worker's reports, a line of JSON each, until its stdout closes. A line
        longer than REPORT_LIMIT is not a report: it is dropped (said once), up to its end."""
        assert process.stdout is not None
        pending, overlong = bytearray(), False
        while chunk := await process.stdout.read(65536):
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                line = bytes(pending[:end])
                del pending[:end + 1]
                if overlong:  # the end of a line too long to be a report
                    overlong = False
                    continue
                self._heard(process, line)
            if len(pending) > REPORT_LIMIT:
                if not overlong:
                    log.error("the worker process (pid %d) wrote a line of over %d bytes: not a report, dropped",
                              process.pid, REPORT_LIMIT)
                pending.clear()
                overlong = True

    def _heard(self, process: asyncio.subprocess.Process, line: bytes) -> None:
        try:
            report = json.loads(line)
        except ValueError:
            report = None
        if not isinstance(report, dict) or report.get("pid") != process.pid:  # (a library's print: passed on)
            log.warning("the worker process (pid %d) printed: %s", process.pid,
                        line[:1000].decode(errors="replace").rstrip())
        elif isinstance(report.get("cannot_start"), str):
            self.cannot_start = report["cannot_start"]
        else:
            self.reported = report

    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def wake(self) -> None:
        """Tell the worker the journal holds new work (one byte per loop turn, however
        many deliveries were journaled in it)."""
        if not self._wake_pending:
            self._wake_pending = True
            asyncio.get_running_loop().call_soon(self._send_wake)

    def _send_wake(self) -> None:
        self._wake_pending = False
        process = self.process
        if process is not None and process.returncode is None and process.stdin is not None \
                and not process.stdin.is_closing():
            process.stdin.write(b"\n")

    def state(self) -> dict[str, object] | None:
        """The running worker's last report; before it has one (it waits for the lock another
        worker holds), the state in the data directory, which may be that other worker's."""
        if self.reported is not None and self.process is not None and self.reported.get("pid") == self.process.pid:
            return self.reported
        try:
            return dict(json.loads((self.directory / "worker.json").read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def status(self) -> str:
        if self.running():
            assert self.process is not None
            return f"running (pid {self.process.pid})"
        if self.spawn_error is not None:
            return f"not running (it could not be started: {self.spawn_error}); being started again"
        if self.process is not None:  # it ended (its last words may still be read: said as they are so far)
            assert self.process.returncode is not None
            return f"not running ({self._ending(self.process.returncode)}); being started again"
        return "starting"

    def _ending(self, code: int) -> str:
        if self.cannot_start:
            why = f": {self.cannot_start}"
        elif code < 0 and code in {-s.value for s in signal.Signals}:
            why = f": killed by {signal.Signals(-code).name}"
        else:
            why = ""
        return f"exit code {code}{why}"

    def problem(self, set_aside: bool = True) -> str | None:
        """Why the work does not go on, or None (`set_aside`: and deliveries set aside, which
        the work goes on beside)."""
        if not self.running():
            return f"the worker process is {self.status()}"
        assert self.process is not None
        state = self.state()
        mine = state is not None and state.get("pid") == self.process.pid
        since = float(state.get("time", 0)) if mine else self.started_at  # type: ignore[union-attr,arg-type]
        age = time.time() - since
        if age > STALE_SECONDS:
            if mine:
                return f"the worker process (pid {self.process.pid}) has not reported for {age:.0f} s"
            reported = float(state.get("time", 0)) if state is not None else 0.0  # type: ignore[arg-type]
            if time.time() - reported <= STALE_SECONDS:  # another worker reports on this directory: this one
                assert state is not None  # waits for the lock that one holds
                return (f"the worker process (pid {self.process.pid}) has waited {age:.0f} s for another foldbot's "
                        f"worker (pid {state.get('pid')}) that works on this data directory ({self.directory}); "
                        f"are two deployments sharing one FOLDBOT_DATA_DIR? (the deliveries this one accepts are "
                        f"done by that one)")
            return f"the worker process (pid {self.process.pid}) has not reported since it started {age:.0f} s ago"
        if not mine:  # (what the last one said, a delivery set aside say, is not known to hold until it reports)
            return (f"the worker process (pid {self.process.pid}) is starting"
                    + (f" (the one before it: {self.ended})" if self.ended else ""))
        journal = (state or {}).get("journal_problem") if mine else None
        if isinstance(journal, str):
            return f"in the worker process: {journal}"
        unrecorded = (state or {}).get("unrecorded") if mine else None
        files = (state or {}).get("files_problem") if mine else None
        aside = (state or {}).get("set_aside") if mine else None
        count = (state or {}).get("set_aside_count") if mine else None
        return (unrecorded_problem(unrecorded if isinstance(unrecorded, int) else 0)
                or (f"the worker process {files}" if isinstance(files, str) else None)
                or (set_aside_problem([(str(d), str(e)) for d, e in aside] if isinstance(aside, list) else [],
                                      count if isinstance(count, int) else None) if set_aside else None))

    def metrics(self) -> str | None:
        """The running worker's last metrics (none from a worker that is gone)."""
        if not self.running():
            return None
        try:
            text = (self.directory / "worker.prom").read_text(encoding="utf-8")
        except OSError:
            return None
        assert self.process is not None
        return text if text.startswith(f"# foldbot worker pid {self.process.pid}\n") else None

    async def stop(self) -> None:
        """Close the worker's stdin (it finishes what it holds and exits); kill it if it
        has not exited within `drain_seconds` and a margin."""
        self._stopping = True
        process = self.process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), timeout=self.settings.drain_seconds + 10)
            except asyncio.TimeoutError:
                log.error("the worker process did not exit in time; killed (its deliveries wait in the journal)")
                process.kill()
                await process.wait()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


def _write(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def publish(state: AppState) -> None:
    """The worker's state to its web process (a line on its stdout: it does not need the
    disk), and its metrics and state in the data directory (for `/metrics`, and for another
    deployment's web process that shares the directory). A directory it cannot write is
    said in the line, and logged once."""
    directory = state.settings.data_dir
    assert directory is not None
    short = state.pool.short_of_budget() if state.pool is not None else []
    report: dict[str, object] = {  # (lists cut to what `/health` shows: a line over REPORT_LIMIT is dropped)
        "pid": os.getpid(), "time": time.time(), "queue_depth": state.queue.qsize(),
        "in_flight": len(state.in_flight), "unrecorded": len(state.unrecorded),
        "journal_problem": state.journal_problem,
        "set_aside": state.set_aside[:SET_ASIDE_NAMED], "set_aside_count": len(state.set_aside),
        "credentials_problem": state.credentials_problem,
        "rate_limited": short[:RATE_LIMITED_SHOWN], "rate_limited_clients": len(short)}
    try:
        _write(directory / "worker.prom", f"# foldbot worker pid {os.getpid()}\n" + state.metrics.render()[0].decode())
        _write(directory / "worker.json", json.dumps(report))
    except OSError as exc:
        report["files_problem"] = f"cannot write its metrics and state in {directory} (FOLDBOT_DATA_DIR): {exc}"
    if report.get("files_problem") != state.files_problem:
        if report.get("files_problem"):
            log.error("worker: %s", report["files_problem"])
        else:
            log.info("worker: writes its metrics and state in %s again", directory)
        state.files_problem = report.get("files_problem")  # type: ignore[assignment]
    _report(report)


def _report(report: dict[str, object]) -> None:
    """One line of JSON to the web process (the worker's stdout is its pipe)."""
    try:
        os.write(sys.stdout.fileno(), json.dumps(report).encode() + b"\n")
    except OSError as exc:  # the web process is gone (it stops this worker too: its stdin closes)
        log.warning("worker: cannot report to its web process: %s", exc)


async def _publishing(state: AppState) -> None:
    while True:
        publish(state)
        await asyncio.sleep(PUBLISH_SECONDS)


#: How often a worker that waits for the data directory's lock tries it again.
LOCK_POLL_SECONDS = 0.2


async def _lock(directory: Path) -> int | None:
    """An exclusive lock on `worker.lock`: one worker per journal (a new one waits for
    the old one to finish). None: its web process closed the pipe while it waited (it is
    stopping), so it does not start."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(directory / "worker.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise JournalUnavailable(f"cannot take the worker's lock in {directory} (FOLDBOT_DATA_DIR): {exc}") from exc
    waiting = False
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if not waiting:
                log.info("worker: waiting for the previous worker process to finish")
                waiting = True
        if _stdin_closed():
            os.close(descriptor)
            return None
        await asyncio.sleep(LOCK_POLL_SECONDS)


def _stdin_closed() -> bool:
    """Whether the web process closed this worker's stdin (a wake-up byte waiting is read
    and dropped: the worker reads the whole journal when it starts)."""
    readable, _, _ = select.select([sys.stdin], [], [], 0)
    return bool(readable) and os.read(sys.stdin.fileno(), 4096) == b""


async def _until_told_to_stop(state: AppState) -> str:
    """Wake the pump for each byte on stdin; return why the worker stops."""
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopped.set)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def read() -> None:
        while await reader.read(4096):
            state.wake.set()

    reading = asyncio.create_task(read())
    signalled = asyncio.create_task(stopped.wait())
    await asyncio.wait({reading, signalled}, return_when=asyncio.FIRST_COMPLETED)
    why = "a signal" if signalled.done() else "the web process closed the pipe"
    for task in (reading, signalled):
        task.cancel()
    await asyncio.gather(reading, signalled, return_exceptions=True)
    return why


async def run_worker(settings: Settings, router: routing.Router) -> None:
    """`foldbot work`: the worker process that `foldbot serve` starts."""
    assert settings.data_dir is not None
    os.nice(WORKER_NICENESS)  # when the CPUs are short, the answers go first
    parent = os.getppid()
    try:
        descriptor = await _lock(settings.data_dir)
        if descriptor is None:
            log.info("worker: its web process stops; it does not start")
            return
        if os.getppid() != parent:  # its web process died while it waited for the lock: nobody will wake it
            log.info("worker: its web process is gone; it does not start")
            os.close(descriptor)
            return
        try:
            state = new_state(settings, router, "worker")
        except JournalUnavailable:
            os.close(descriptor)
            raise
    except JournalUnavailable as exc:  # said on the web process's `/health` (and printed, by `main`: exit 2)
        _report({"pid": os.getpid(), "time": time.time(), "cannot_start": str(exc)})
        raise
    try:
        await connect(state)
        await start_work(state)
        state.background.append(asyncio.create_task(_publishing(state)))
        log.info("worker: pid %d takes its work from the journal %s", os.getpid(),
                 state.journal.where)
        why = await _until_told_to_stop(state)
        log.info("worker: stopping (%s); finishing what it holds", why)
        await drain_work(state)
    finally:
        await stop(state)
        publish(state)
        os.close(descriptor)
