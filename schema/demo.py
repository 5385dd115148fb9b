"""Demo data for the three domains: small, deterministic, and written to the key design like any other client."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from gateway import Declaration, Item

from .model import COURSE, ENROLLMENT, MODEL, ORGANIZATION, PROJECT, STUDENT, TENANCY, TICKET, USER, WORKSPACE

_STATUSES = ("active", "paused", "archived")
_MAJORS = ("physics", "history", "mathematics", "biology", "economics")
_GRADES = ("A", "B", "C", None)


def demo_items() -> Iterator[Item]:
    rng = random.Random(7)
    for w, (name, region, projects) in enumerate(
        [("Acme Robotics", "eu-west-1", 24), ("Globex Research", "us-east-1", 7), ("Initech", "ap-south-1", 0)]
    ):
        ws = {"workspaceId": f"ws-{w + 1}"}
        yield MODEL.item(WORKSPACE, ws, {"displayName": name, "region": region, "seatLimit": 10 * (w + 1)})
        for p in range(projects):
            ids = {**ws, "projectId": f"2026-{p + 1:04d}"}
            yield MODEL.item(
                PROJECT,
                ids,
                {"title": f"{name} project {p + 1}", "status": _STATUSES[p % 3], "createdBy": f"user{p % 5}"},
            )
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for org, level, people in [("acme", "enterprise", 6), ("umbrella", "free", 2)]:
        yield MODEL.item(ORGANIZATION, {"orgName": org}, {"name": org.title(), "subscriptionLevel": level})
        for u in range(people):
            user = {"orgName": org, "username": f"{org}-user{u + 1}"}
            yield MODEL.item(
                USER, user, {"username": user["username"], "name": f"User {u + 1} of {org}", "role": "member"}
            )
            for t in range(rng.randint(0, 8)):
                opened = start + timedelta(days=rng.randint(0, 300), seconds=rng.randint(0, 86_399))
                ticket = {**user, "ticketId": f"{opened:%Y%m%dT%H%M%SZ}-{rng.randrange(16**6):06x}"}
                yield MODEL.item(TICKET, ticket, {"title": f"Ticket {t + 1} of {user['username']}", "status": "open"})
    courses = [f"crs-{c:03d}" for c in range(1, 9)]
    for c, course in enumerate(courses):
        yield MODEL.item(
            COURSE, {"courseId": course}, {"title": f"Course {c + 1}", "credits": 3 + c % 3, "term": "2026-fall"}
        )
    for s in range(1, 21):
        student = {"studentId": f"stu-{s:03d}"}
        yield MODEL.item(STUDENT, student, {"name": f"Student {s}", "year": 1 + s % 4, "major": _MAJORS[s % 5]})
        for course in rng.sample(courses, rng.randint(1, 4)):
            grade = _GRADES[rng.randrange(len(_GRADES))]
            edge = {"enrolledOn": f"2026-09-{rng.randint(1, 20):02d}", **({"grade": grade} if grade else {})}
            yield MODEL.item(ENROLLMENT, {**student, "courseId": course}, edge)


DEMO = Declaration(MODEL, TENANCY, seed=demo_items)
"""The three example domains with their demo data: what tablegraph serves by default."""
