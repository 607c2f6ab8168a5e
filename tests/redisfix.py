"""A real `redis-server` for the tests of the Redis journal (`make test` installs Debian's):
one per test module, flushed for each test. Outside CI a missing binary skips those tests,
saying why; in CI it fails them."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import free_port


@contextlib.contextmanager
def running_redis(folder: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A `redis-server` of its own on a free loopback port: its URL and its process."""
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server is not installed (apt-get install redis-server; `make test` does it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + ": the Redis tests must run in CI")
        pytest.skip(message)
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                "no", "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    import redis
    client = redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    else:
        process.kill()
        pytest.fail("redis-server did not start")
    try:
        yield f"redis://127.0.0.1:{port}/0", process
    finally:
        process.send_signal(signal.SIGCONT)  # (a test may have stopped it)
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as (url, _):
        yield url


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A `redis-server` for one test alone (which may stop it: SIGSTOP, a server that hangs)."""
    with running_redis(tmp_path) as server:
        yield server


@pytest.fixture
def redis_url(redis_server: str) -> str:
    import redis
    redis.Redis.from_url(redis_server).flushdb()
    return redis_server
