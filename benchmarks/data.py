"""Benchmark tables of N items in the key shapes of DESIGN.md: fixed probe data plus filler, loaded once.

The probe data is what the canonical operations read and is the same in every table, so a bigger table only
adds unrelated partitions: the latency ratio between sizes shows what table size costs (nothing, if nothing
scans). Items are written in the wire format with literal key strings, like any other client of the table.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from typing import Any

from gateway.dynamo.store import table_definition
from schema.model import MODEL

WS = "ws-probe"
PROJECTS = 30
ORG = "org-probe"
ORG_USERS = 120
TEAM = "org-team"
TEAM_USERS = 10
TICKETS = 15
STUDENT = "stu-probe"
COURSE = "crs-probe"
EDGES = 120
"""The probe student takes courses crs-p001..; the probe course has students stu-p001.. enrolled."""
CLASS = 12
CLASS_LOAD = 6
"""A class of students stu-c01.. and courses crs-c01..: student i takes courses i to i + 5 (mod 12), so every
course has six students and their courses overlap, as in a real timetable."""

_VERSION = "2"
"""Bump when the generated items change: tables loaded by an older generator are then rebuilt."""
_MARKER = {"PK": {"S": "BENCH#table"}, "SK": {"S": "LOADED"}}
_BATCH = 25
_WRITERS = 16
_ATTEMPTS = 10

WireItem = dict[str, Any]


def project_id(n: int) -> str:
    return f"2026-{n:04d}"


def username(n: int) -> str:
    return f"user-{n:03d}"


def ticket_id(user: int, n: int) -> str:
    return f"202601{user % 28 + 1:02d}T{n // 60:02d}{n % 60:02d}00Z-{user:03d}{n:03d}"


def edge_id(prefix: str, n: int) -> str:
    return f"{prefix}-p{n:03d}"


def class_id(prefix: str, n: int) -> str:
    return f"{prefix}-c{n:02d}"


def class_courses(student: int) -> list[int]:
    """The courses class student ``student`` takes, by number."""
    return [(student - 1 + k) % CLASS + 1 for k in range(CLASS_LOAD)]


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def _workspace(ws: str, name: str) -> WireItem:
    return {
        "PK": _s(f"WS#{ws}"),
        "SK": _s("META"),
        "displayName": _s(name),
        "region": _s("eu-west-1"),
        "seatLimit": _n(25),
    }


def _project(ws: str, n: int) -> WireItem:
    return {
        "PK": _s(f"WS#{ws}"),
        "SK": _s(f"PROJ#{project_id(n)}"),
        "title": _s(f"Project {n} of {ws}"),
        "status": _s(("active", "paused", "archived")[n % 3]),
        "createdBy": _s(f"user{n % 7}"),
    }


def _organization(org: str) -> WireItem:
    return {
        "PK": _s(f"ORG#{org}"),
        "SK": _s(f"METADATA#{org}"),
        "name": _s(org.title()),
        "subscriptionLevel": _s("pro"),
    }


def _user(org: str, user: str, n: int) -> WireItem:
    return {
        "PK": _s(f"ORG#{org}"),
        "SK": _s(f"USER#{user}"),
        "GSI1PK": _s(f"ORG#{org}#USER#{user}"),
        "GSI1SK": _s(f"USER#{user}"),
        "username": _s(user),
        "name": _s(f"User {n} of {org}"),
        "role": _s("member"),
    }


def _ticket(org: str, user: str, ticket: str) -> WireItem:
    return {
        "PK": _s(f"TICKET#{ticket}"),
        "SK": _s(f"TICKET#{ticket}"),
        "GSI1PK": _s(f"ORG#{org}#USER#{user}"),
        "GSI1SK": _s(f"TICKET#{ticket}"),
        "title": _s(f"Ticket {ticket}"),
        "status": _s("open"),
    }


def _student(student: str, n: int) -> WireItem:
    return {
        "PK": _s(f"STU#{student}"),
        "SK": _s("PROFILE"),
        "name": _s(f"Student {student}"),
        "year": _n(1 + n % 4),
        "major": _s("physics"),
    }


def _course(course: str, n: int) -> WireItem:
    return {
        "PK": _s(f"CRS#{course}"),
        "SK": _s("METADATA"),
        "title": _s(f"Course {course}"),
        "credits": _n(3 + n % 3),
        "term": _s("2026-fall"),
    }


def _enrollment(student: str, course: str, n: int) -> WireItem:
    return {
        "PK": _s(f"STU#{student}"),
        "SK": _s(f"ENROLL#CRS#{course}"),
        "GSI1PK": _s(f"CRS#{course}"),
        "GSI1SK": _s(f"STU#{student}"),
        "enrolledOn": _s(f"2026-09-{n % 28 + 1:02d}"),
        "grade": _s("ABC"[n % 3]),
    }


def probe_items() -> Iterator[WireItem]:
    """What the canonical operations read; identical in every benchmark table."""
    yield _workspace(WS, "Probe workspace")
    for n in range(1, PROJECTS + 1):
        yield _project(WS, n)
    yield _organization(ORG)
    for n in range(1, ORG_USERS + 1):
        yield _user(ORG, username(n), n)
    yield _organization(TEAM)
    for n in range(1, TEAM_USERS + 1):
        yield _user(TEAM, username(n), n)
        for t in range(TICKETS):
            yield _ticket(TEAM, username(n), ticket_id(n, t))
    yield _student(STUDENT, 0)
    yield _course(COURSE, 0)
    for n in range(1, EDGES + 1):
        course, student = edge_id("crs", n), edge_id("stu", n)
        yield _course(course, n)
        yield _enrollment(STUDENT, course, n)
        yield _student(student, n)
        yield _enrollment(student, COURSE, n)
    for n in range(1, CLASS + 1):
        yield _course(class_id("crs", n), n)
        yield _student(class_id("stu", n), n)
        for taken in class_courses(n):
            yield _enrollment(class_id("stu", n), class_id("crs", taken), taken)


def _filler() -> Iterator[WireItem]:
    """Endless unrelated partitions of every entity, in the same proportions block after block."""
    for block in itertools.count(1):
        ws, org = f"ws-f{block}", f"org-f{block}"
        yield _workspace(ws, f"Workspace {block}")
        for n in range(1, 11):
            yield _project(ws, n)
        yield _organization(org)
        for n in range(1, 5):
            user = username(n)
            yield _user(org, user, n)
            for t in range(4):
                yield _ticket(org, user, f"{ticket_id(n, t)}-f{block}")
        courses = [f"crs-f{block}-{n}" for n in range(1, 6)]
        for n, course in enumerate(courses):
            yield _course(course, n)
        for n in range(1, 6):
            student = f"stu-f{block}-{n}"
            yield _student(student, n)
            for course in courses[n - 1 : n + 2]:
                yield _enrollment(student, course, n)


def table_items(size: int) -> Iterator[WireItem]:
    """The probe data, then filler: ``size`` items with the load marker that is written last."""
    probe = list(probe_items())
    if size < minimum_size():
        raise ValueError(f"a benchmark table needs at least {minimum_size()} items, not {size}")
    yield from probe
    yield from itertools.islice(_filler(), size - len(probe) - 1)


def minimum_size() -> int:
    return sum(1 for _ in probe_items()) + 1


async def ensure_table(client: Any, table: str, size: int) -> float | None:
    """Create and fill ``table`` with ``size`` items unless a complete load is there; the seconds it took.

    A table without the marker (an interrupted load) or from another generator version is rebuilt.
    """
    if await _loaded(client, table, size):
        return None
    names = (await client.list_tables())["TableNames"]
    if table in names:
        await client.delete_table(TableName=table)
        await client.get_waiter("table_not_exists").wait(TableName=table)
    await create_table(client, table)
    started = time.perf_counter()
    queue = _batches(table_items(size))
    await asyncio.gather(*(_writer(client, table, queue) for _ in range(_WRITERS)))
    # The marker goes last, so it is only there once everything before it is in.
    await _write(client, table, [{**_MARKER, "items": _n(size), "version": _s(_VERSION)}])
    return time.perf_counter() - started


def _batches(items: Iterator[WireItem]) -> Iterator[list[WireItem]]:
    while batch := list(itertools.islice(items, _BATCH)):
        yield batch


async def _writer(client: Any, table: str, queue: Iterator[list[WireItem]]) -> None:
    # Sharing one iterator among tasks is safe: asyncio switches tasks only at an await.
    for batch in queue:
        await _write(client, table, batch)


async def _write(client: Any, table: str, batch: list[WireItem]) -> None:
    request: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in batch]}
    for attempt in range(_ATTEMPTS):
        response = await client.batch_write_item(RequestItems=request)
        request = response.get("UnprocessedItems") or {}
        if not request:
            return
        await asyncio.sleep(0.05 * 2**attempt)
    raise RuntimeError(f"DynamoDB kept returning unprocessed items while loading {table}")


async def _loaded(client: Any, table: str, size: int) -> bool:
    try:
        response = await client.get_item(TableName=table, Key=_MARKER)
    except client.exceptions.ResourceNotFoundException:
        return False
    marker = response.get("Item", {})
    return bool(marker.get("items") == _n(size) and marker.get("version") == _s(_VERSION))


async def create_table(client: Any, table: str) -> None:
    await client.create_table(TableName=table, **table_definition(MODEL))
    await client.get_waiter("table_exists").wait(TableName=table)
