"""The servers under test, each in its own process: started, waited for, their CPU time read, stopped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil

_READY_TIMEOUT = 60.0
_STOP_GRACE = 10.0
_PROBE = b'{"query": "{ __typename }"}'


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    what: str

    def cpu_seconds(self) -> float:
        """User and system CPU time of the server and every process it started (uvicorn workers)."""
        process = psutil.Process(self.process.pid)
        total = 0.0
        for one in [process, *process.children(recursive=True)]:
            try:
                times = one.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def wait_until_ready(self) -> None:
        """Return once ``/graphql`` answers; servers start together and are waited for one by one."""
        self._wait_for(_answers)

    def wait_until_listening(self) -> None:
        """Return once the server accepts connections: for one that does not speak GraphQL."""
        self._wait_for(_listens)

    def _wait_for(self, up: Callable[[str], bool]) -> None:
        deadline = time.monotonic() + _READY_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.what} exited with code {self.process.returncode}: {self._tail()}")
            if up(self.url):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.what} did not answer within {_READY_TIMEOUT:g} s: {self._tail()}")
            time.sleep(0.1)

    def _tail(self) -> str:
        self.log.seek(0)
        return " | ".join(self.log.read().decode(errors="replace").strip().splitlines()[-15:])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def gateway_command(endpoint_url: str, table: str, port: int, workers: int) -> list[str]:
    return [
        *("-m", "gateway", "serve", "--endpoint-url", endpoint_url, "--table", table),
        *("--port", str(port), "--workers", str(workers)),
    ]


def peer_command(endpoint_url: str, table: str, port: int) -> list[str]:
    return ["-m", "benchmarks.peer", "--endpoint-url", endpoint_url, "--table", table, "--port", str(port)]


def latency_command(upstream: str, delay_ms: float, port: int) -> list[str]:
    return ["-m", "benchmarks.latency", "--upstream", upstream, "--delay-ms", f"{delay_ms:g}", "--port", str(port)]


@contextmanager
def serve(arguments: Sequence[str], port: int, env: Mapping[str, str] | None = None) -> Iterator[Server]:
    """Run ``python <arguments>``, serving on ``port``, until the block ends."""
    # Run from the checkout, so ``benchmarks`` imports whether or not the project is installed.
    root = Path(__file__).resolve().parent.parent
    environment = {**os.environ, **(env or {}), "PYTHONPATH": str(root)}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, *arguments],
            cwd=root,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield Server(f"http://127.0.0.1:{port}", process, log, " ".join(arguments))
        finally:
            process.terminate()
            try:
                process.wait(timeout=_STOP_GRACE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _listens(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=2.0):
            return True
    except OSError:
        return False


def _answers(url: str) -> bool:
    request = urllib.request.Request(
        f"{url}/graphql", data=_PROBE, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=2.0) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False
