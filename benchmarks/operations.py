"""The canonical operations of DESIGN.md as GraphQL requests over the probe data, with their target plans."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from benchmarks import data

PAGE = 100
"""The page size of the big reads: a 100-item Query, a 100-key BatchGetItem."""
SMALL_PAGE = 10
FIRST_PROJECTS = 20


@dataclass(frozen=True)
class Operation:
    number: int
    name: str
    query: str
    calls: int
    """The calls and sequential rounds DESIGN.md's optimal plan takes for this request."""
    rounds: int
    nested: bool
    """Children are read under parents: a resolver per object (N+1) makes more calls than the plan."""
    variables: dict[str, Any] = field(default_factory=dict)


OPERATIONS = (
    Operation(
        1,
        f"workspace + {FIRST_PROJECTS} newest projects",
        f'{{ workspace(workspaceId: "{data.WS}") {{ displayName projects(first: {FIRST_PROJECTS}) '
        "{ nodes { projectId title status } pageInfo { hasNextPage } } } }",
        calls=2,
        rounds=1,
        nested=False,
    ),
    Operation(
        2,
        f"organization + {PAGE} users",
        f'{{ organization(orgName: "{data.ORG}") {{ orgName subscriptionLevel users(first: {PAGE}) '
        "{ nodes { username name role } pageInfo { hasNextPage } } } }",
        calls=1,
        rounds=1,
        nested=False,
    ),
    Operation(
        3,
        f"organization + {data.TEAM_USERS} users + {SMALL_PAGE} tickets each",
        f'{{ organization(orgName: "{data.TEAM}") {{ orgName users(first: {data.TEAM_USERS}) {{ nodes {{ username '
        f"tickets(first: {SMALL_PAGE}) {{ nodes {{ ticketId title }} pageInfo {{ hasNextPage }} }} }} }} }} }}",
        calls=1 + data.TEAM_USERS,
        rounds=2,
        nested=True,
    ),
    Operation(
        4,
        f"user + {SMALL_PAGE} newest tickets",
        f'{{ user(orgName: "{data.TEAM}", username: "{data.username(1)}") {{ name '
        f"tickets(first: {SMALL_PAGE}) {{ nodes {{ ticketId title status }} pageInfo {{ hasNextPage }} }} }} }}",
        calls=1,
        rounds=1,
        nested=False,
    ),
    Operation(
        5,
        f"student + {PAGE} courses (edges)",
        f'{{ student(studentId: "{data.STUDENT}") {{ name courses(first: {PAGE}) '
        "{ edges { grade node { courseId title } } pageInfo { hasNextPage } } } }",
        calls=1 + math.ceil(PAGE / 100),
        rounds=2,
        nested=True,
    ),
    Operation(
        6,
        f"course + {PAGE} students (edges)",
        f'{{ course(courseId: "{data.COURSE}") {{ title students(first: {PAGE}) '
        "{ edges { grade node { studentId name } } pageInfo { hasNextPage } } } }",
        calls=2 + math.ceil(PAGE / 100),
        rounds=2,
        nested=True,
    ),
    Operation(
        7,
        f"{PAGE} students by id",
        "query($ids: [ID!]!) { students(studentIds: $ids) { studentId name year } }",
        calls=math.ceil(PAGE / 100),
        rounds=1,
        nested=False,
        variables={"ids": [data.edge_id("stu", n) for n in range(1, PAGE + 1)]},
    ),
    Operation(
        8,
        "project + its workspace",
        f'{{ project(workspaceId: "{data.WS}", projectId: "{data.project_id(data.PROJECTS)}") '
        "{ title workspace { displayName } } }",
        calls=1,
        rounds=1,
        nested=True,
    ),
)
