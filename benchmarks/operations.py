"""The benchmark's operations as GraphQL requests over the probe data, with their target plans: DESIGN.md's eight
canonical operations, then nested ones that go from a child to its parent and back down to the parent's children."""

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
    nested: bool = False
    """From a child to its parent and on to the parent's children, three levels or more: a resolver that reads
    when GraphQL reaches it waits a round per level, where the plan reads what the arguments fix at once."""
    variables: dict[str, Any] = field(default_factory=dict)

    @property
    def canonical(self) -> bool:
        return not self.nested


_CLASS_COURSE = 1
_CLASSMATES = [n for n in range(1, data.CLASS + 1) if _CLASS_COURSE in data.class_courses(n)]
"""The class students taking the nested operation's course; their other courses are read in one batch."""
_THEIR_COURSES = {course for n in _CLASSMATES for course in data.class_courses(n)} - {_CLASS_COURSE}

OPERATIONS = (
    Operation(
        1,
        f"workspace + {FIRST_PROJECTS} newest projects",
        f'{{ workspace(workspaceId: "{data.WS}") {{ displayName projects(first: {FIRST_PROJECTS}) '
        "{ nodes { projectId title status } pageInfo { hasNextPage } } } }",
        calls=2,
        rounds=1,
    ),
    Operation(
        2,
        f"organization + {PAGE} users",
        f'{{ organization(orgName: "{data.ORG}") {{ orgName subscriptionLevel users(first: {PAGE}) '
        "{ nodes { username name role } pageInfo { hasNextPage } } } }",
        calls=1,
        rounds=1,
    ),
    Operation(
        3,
        f"organization + {data.TEAM_USERS} users + {SMALL_PAGE} tickets each",
        f'{{ organization(orgName: "{data.TEAM}") {{ orgName users(first: {data.TEAM_USERS}) {{ nodes {{ username '
        f"tickets(first: {SMALL_PAGE}) {{ nodes {{ ticketId title }} pageInfo {{ hasNextPage }} }} }} }} }} }}",
        calls=1 + data.TEAM_USERS,
        rounds=2,
    ),
    Operation(
        4,
        f"user + {SMALL_PAGE} newest tickets",
        f'{{ user(orgName: "{data.TEAM}", username: "{data.username(1)}") {{ name '
        f"tickets(first: {SMALL_PAGE}) {{ nodes {{ ticketId title status }} pageInfo {{ hasNextPage }} }} }} }}",
        calls=1,
        rounds=1,
    ),
    Operation(
        5,
        f"student + {PAGE} courses (edges)",
        f'{{ student(studentId: "{data.STUDENT}") {{ name courses(first: {PAGE}) '
        "{ edges { grade node { courseId title } } pageInfo { hasNextPage } } } }",
        calls=1 + math.ceil(PAGE / 100),
        rounds=2,
    ),
    Operation(
        6,
        f"course + {PAGE} students (edges)",
        f'{{ course(courseId: "{data.COURSE}") {{ title students(first: {PAGE}) '
        "{ edges { grade node { studentId name } } pageInfo { hasNextPage } } } }",
        calls=2 + math.ceil(PAGE / 100),
        rounds=2,
    ),
    Operation(
        7,
        f"{PAGE} students by id",
        "query($ids: [ID!]!) { students(studentIds: $ids) { studentId name year } }",
        calls=math.ceil(PAGE / 100),
        rounds=1,
        variables={"ids": [data.edge_id("stu", n) for n in range(1, PAGE + 1)]},
    ),
    Operation(
        8,
        "project + its workspace",
        f'{{ project(workspaceId: "{data.WS}", projectId: "{data.project_id(data.PROJECTS)}") '
        "{ title workspace { displayName } } }",
        calls=1,
        rounds=1,
    ),
    Operation(
        9,
        f"project + its workspace + {FIRST_PROJECTS} newest projects",
        f'{{ project(workspaceId: "{data.WS}", projectId: "{data.project_id(data.PROJECTS - 5)}") {{ id title '
        f"workspace {{ id displayName projects(first: {FIRST_PROJECTS}) {{ nodes {{ id projectId title }} "
        "pageInfo { hasNextPage } } } } }",
        calls=2,
        rounds=1,
        nested=True,
    ),
    Operation(
        10,
        f"ticket + its user + its organization + {SMALL_PAGE} users",
        f'{{ ticket(ticketId: "{data.ticket_id(1, 0)}") {{ id title status user {{ id name organization {{ id name '
        f"users(first: {SMALL_PAGE}) {{ nodes {{ id username name }} pageInfo {{ hasNextPage }} }} }} }} }} }}",
        calls=3,
        rounds=2,
        nested=True,
    ),
    Operation(
        11,
        f"course + its {len(_CLASSMATES)} students + their courses",
        f'{{ course(courseId: "{data.class_id("crs", _CLASS_COURSE)}") {{ id title students(first: {SMALL_PAGE}) '
        f"{{ nodes {{ id name courses(first: {SMALL_PAGE}) {{ nodes {{ id courseId title }} }} }} }} }} }}",
        calls=2 + len(_CLASSMATES) + math.ceil(len(_THEIR_COURSES) / 100),
        rounds=3,
        nested=True,
    ),
)
