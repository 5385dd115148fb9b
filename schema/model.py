"""The key design of the three example domains: every stored item follows these templates.

| entity     | PK                  | SK                     | GSI1PK                         | GSI1SK            |
|------------|---------------------|------------------------|--------------------------------|-------------------|
| Workspace  | WS#<workspaceId>    | META                   |                                |                   |
| Project    | WS#<workspaceId>    | PROJ#<projectId>       |                                |                   |
| Organization | ORG#<orgName>     | METADATA#<orgName>     |                                |                   |
| User       | ORG#<orgName>       | USER#<username>        | ORG#<orgName>#USER#<username>  | USER#<username>   |
| Ticket     | TICKET#<ticketId>   | TICKET#<ticketId>      | ORG#<orgName>#USER#<username>  | TICKET#<ticketId> |
| Student    | STU#<studentId>     | PROFILE                |                                |                   |
| Course     | CRS#<courseId>      | METADATA               |                                |                   |
| Enrollment | STU#<studentId>     | ENROLL#CRS#<courseId>  | CRS#<courseId>                 | STU#<studentId>   |

Why the sort keys look like this: ``META``/``METADATA#`` sort before ``PROJ#``/``USER#`` and ``USER#`` sorts after
``TICKET#``, ``PROFILE`` after ``ENROLL#``; so an organization and its users, a user and its newest tickets, a
student and its enrolments each come back from one Query. A workspace's projects are read newest first, away from
``META``, so a workspace and its projects are two requests sent at once.
"""

from __future__ import annotations

from gateway.config import DEFAULT_TABLE
from gateway.model import Collection, Entity, Index, KeyShape, Link, Model

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")

WORKSPACE = Entity(
    "Workspace",
    {None: KeyShape.of("WS#{workspaceId}", "META")},
    {"displayName": "S", "region": "S", "seatLimit": "INT"},
)
PROJECT = Entity(
    "Project",
    {None: KeyShape.of("WS#{workspaceId}", "PROJ#{projectId}")},
    {"title": "S", "status": "S", "createdBy": "S"},
)
ORGANIZATION = Entity(
    "Organization",
    {None: KeyShape.of("ORG#{orgName}", "METADATA#{orgName}")},
    {"name": "S", "subscriptionLevel": "S"},
)
USER = Entity(
    "User",
    {
        None: KeyShape.of("ORG#{orgName}", "USER#{username}"),
        "GSI1": KeyShape.of("ORG#{orgName}#USER#{username}", "USER#{username}"),
    },
    {"username": "S", "name": "S", "role": "S"},
)
TICKET = Entity(
    "Ticket",
    {
        None: KeyShape.of("TICKET#{ticketId}", "TICKET#{ticketId}"),
        "GSI1": KeyShape.of("ORG#{orgName}#USER#{username}", "TICKET#{ticketId}"),
    },
    {"title": "S", "status": "S"},
)
STUDENT = Entity(
    "Student",
    {None: KeyShape.of("STU#{studentId}", "PROFILE")},
    {"name": "S", "year": "INT", "major": "S"},
)
COURSE = Entity(
    "Course",
    {None: KeyShape.of("CRS#{courseId}", "METADATA")},
    {"title": "S", "credits": "INT", "term": "S"},
)
ENROLLMENT = Entity(
    "Enrollment",
    {
        None: KeyShape.of("STU#{studentId}", "ENROLL#CRS#{courseId}"),
        "GSI1": KeyShape.of("CRS#{courseId}", "STU#{studentId}"),
    },
    {"enrolledOn": "S", "grade": "S"},
)

WORKSPACE_PROJECTS = Collection("Workspace.projects", WORKSPACE, PROJECT, ascending=False)
ORGANIZATION_USERS = Collection("Organization.users", ORGANIZATION, USER)
USER_TICKETS = Collection("User.tickets", USER, TICKET, index="GSI1", ascending=False)
# The profile sorts after the enrolments, so a student's courses are read in descending key order.
STUDENT_COURSES = Collection("Student.courses", STUDENT, ENROLLMENT, ascending=False, target=COURSE)
COURSE_STUDENTS = Collection("Course.students", COURSE, ENROLLMENT, index="GSI1", target=STUDENT)

PROJECT_WORKSPACE = Link("Project.workspace", PROJECT, WORKSPACE)
USER_ORGANIZATION = Link("User.organization", USER, ORGANIZATION)
TICKET_USER = Link("Ticket.user", TICKET, USER)

MODEL = Model(
    table=DEFAULT_TABLE,
    indexes=(TABLE, GSI1),
    entities=(WORKSPACE, PROJECT, ORGANIZATION, USER, TICKET, STUDENT, COURSE, ENROLLMENT),
    collections=(WORKSPACE_PROJECTS, ORGANIZATION_USERS, USER_TICKETS, STUDENT_COURSES, COURSE_STUDENTS),
    links=(PROJECT_WORKSPACE, USER_ORGANIZATION, TICKET_USER),
)
