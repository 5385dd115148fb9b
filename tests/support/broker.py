"""A real Redis for the fleet's tests: Debian's ``redis-server`` on 127.0.0.1, on a free port, stopped and started
again on the same port (a broker restart)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

from benchmarks.servers import free_port

REDIS_SERVER = shutil.which("redis-server")


class RedisServer:
    """``redis-server`` without persistence: what a restart keeps is nothing, as with a broker that failed over."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert REDIS_SERVER is not None
        arguments = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self._process = subprocess.Popen(
            [REDIS_SERVER, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(500):
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited with code {self._process.returncode}")
            if self.answers():
                return
            time.sleep(0.02)
        raise RuntimeError("redis-server did not answer")

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
