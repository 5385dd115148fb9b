"""A fault-injecting HTTP proxy between a gateway and DynamoDB Local: throttling, 500s, lost answers, delays.

The proxy listens on 127.0.0.1 and forwards DynamoDB's JSON protocol (HTTP/1.1, keep-alive) to the real engine.
Each request is matched against the rules of its operation (``X-Amz-Target``); which rule fires is drawn from a
random generator seeded per operation, so a run is repeatable as far as the order of requests is. Every exchange
is recorded with what DynamoDB answered, which is the ground truth of what was applied: a write DynamoDB answered
200 was applied, whatever the gateway heard.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from benchmarks.latency import read_message

Kind = Literal["throttle", "error_before", "error_after", "drop_after", "delay"]
KINDS: tuple[Kind, ...] = ("throttle", "error_before", "error_after", "drop_after", "delay")
"""throttle: 400 ThrottlingException or ProvisionedThroughputExceededException, not forwarded.
error_before: 500 InternalServerError, not forwarded. error_after: forwarded (DynamoDB applies it), then 500.
drop_after: forwarded, then the connection is closed without an answer. delay: forwarded after a pause."""

WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"})
_PREFIX = "com.amazonaws.dynamodb.v20120810#"


@dataclass
class Rule:
    """Fires with ``probability`` on requests of ``operations`` (all when empty), at most ``times`` times."""

    kind: Kind
    probability: float = 1.0
    operations: frozenset[str] = frozenset()
    times: int | None = None
    delay: float = 0.05
    """Seconds, for ``delay``."""
    code: str = ""
    """The error code of ``error_before`` and ``error_after`` (InternalServerError when empty)."""
    status: int = 500
    """Their HTTP status."""
    after: Callable[[], None] | None = None
    """Run once DynamoDB has answered a forwarded request, before the proxy answers (or does not): another
    client's write landing between an attempt and its retry."""
    fired: int = field(default=0, init=False)

    def matches(self, operation: str) -> bool:
        spent = self.times is not None and self.fired >= self.times
        return not spent and (not self.operations or operation in self.operations)


@dataclass(frozen=True)
class Exchange:
    """One request as the proxy saw it: the fault it got, and DynamoDB's status if it was forwarded."""

    operation: str
    body: dict[str, Any]
    fault: Kind | None
    status: int | None

    @property
    def applied(self) -> bool:
        """A write DynamoDB answered 200: it was applied (a transaction's retry with its token answers 200 too)."""
        return self.operation in WRITES and self.status == 200


@dataclass(frozen=True)
class Write:
    """One item written by an applied exchange: its action, its key (PK, SK), and its request body as JSON."""

    index: int
    """The position of its exchange among all exchanges."""
    action: str
    key: tuple[str, str]
    text: str


class FaultProxy:
    """``with FaultProxy(upstream, rules, seed) as proxy:`` serves on ``proxy.url`` until the block ends."""

    def __init__(self, upstream: str, rules: Sequence[Rule] = (), seed: int = 0) -> None:
        parsed = urlparse(upstream)
        self._upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.rules = list(rules)
        self.seed = seed
        self.exchanges: list[Exchange] = []
        self.requests: Counter[str] = Counter()
        self.faults: Counter[Kind] = Counter()
        self._random: dict[str, random.Random] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy", daemon=True)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.url = ""

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        start = asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._server = asyncio.run_coroutine_threadsafe(start, self._loop).result(timeout=10)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def set_rules(self, rules: Sequence[Rule]) -> None:
        with self._lock:
            self.rules = list(rules)

    def writes(self, start: int = 0, stop: int | None = None) -> Iterator[Write]:
        """The items written by applied exchanges ``start`` to ``stop``, one per item of a transaction."""
        for index, exchange in enumerate(self.exchanges[start:stop], start):
            if not exchange.applied:
                continue
            if exchange.operation == "TransactWriteItems":
                parts = [(action, body) for one in exchange.body["TransactItems"] for action, body in one.items()]
            else:
                parts = [(exchange.operation.removesuffix("Item"), exchange.body)]
            for action, body in parts:
                key = body.get("Key") or body.get("Item") or {}
                yield Write(index, action, (key["PK"]["S"], key["SK"]["S"]), json.dumps(body))

    # --- serving ----------------------------------------------------------------------------------------------

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                request = await read_message(reader)
                if request is None:
                    return
                head, headers, body = request
                operation = headers.get("x-amz-target", "").rpartition(".")[2]
                rule = self._choose(operation)
                if rule is not None and rule.kind in ("throttle", "error_before"):
                    self._record(operation, body, rule.kind, None)
                    writer.write(_error(rule))
                    await writer.drain()
                    continue
                if rule is not None and rule.kind == "delay":
                    await asyncio.sleep(rule.delay)
                answer = await self._forward(head + body)
                self._record(operation, body, rule.kind if rule else None, int(answer[0].split(b" ", 2)[1]))
                if rule is not None and rule.after is not None:
                    await asyncio.to_thread(rule.after)
                if rule is not None and rule.kind == "drop_after":
                    return
                writer.write(_error(rule) if rule is not None and rule.kind == "error_after" else answer[0] + answer[2])
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._connections.discard(task)
            writer.close()

    async def _forward(self, request: bytes) -> tuple[bytes, dict[str, str], bytes]:
        """DynamoDB's answer, over a connection of its own: no idle connection can go stale between requests."""
        reader, writer = await asyncio.open_connection(*self._upstream)
        try:
            writer.write(request)
            await writer.drain()
            answer = await read_message(reader)
        finally:
            writer.close()
        if answer is None:
            raise ConnectionError("DynamoDB closed the connection without answering")
        return answer

    def _choose(self, operation: str) -> Rule | None:
        with self._lock:
            self.requests[operation] += 1
            rng = self._random.setdefault(operation, random.Random(f"{self.seed}:{operation}"))
            draw, total = rng.random(), 0.0
            for rule in self.rules:
                if not rule.matches(operation):
                    continue
                total += rule.probability
                if draw < total:
                    rule.fired += 1
                    self.faults[rule.kind] += 1
                    return rule
            return None

    def _record(self, operation: str, body: bytes, fault: Kind | None, status: int | None) -> None:
        parsed: dict[str, Any] = json.loads(body) if body else {}
        with self._lock:
            self.exchanges.append(Exchange(operation, parsed, fault, status))


def _error(rule: Rule) -> bytes:
    """An error answer as DynamoDB gives it; throttling alternates between its two codes."""
    if rule.kind == "throttle":
        code, status = ("ThrottlingException", "ProvisionedThroughputExceededException")[rule.fired % 2], 400
    else:
        code, status = rule.code or "InternalServerError", rule.status
    payload = json.dumps({"__type": _PREFIX + code, "message": f"injected by the fault proxy: {rule.kind}"}).encode()
    head = (
        f"HTTP/1.1 {status} {'Bad Request' if status < 500 else 'Internal Server Error'}\r\n"
        "Content-Type: application/x-amz-json-1.0\r\n"
        f"Content-Length: {len(payload)}\r\nx-amzn-RequestId: fault-proxy\r\n\r\n"
    )
    return head.encode() + payload
