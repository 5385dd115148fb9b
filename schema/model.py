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
| (token)    | TOKEN#<clientToken> | TOKEN                  |                                |                   |

Why the sort keys look like this: ``META``/``METADATA#`` sort before ``PROJ#``/``USER#`` and ``USER#`` sorts after
``TICKET#``, ``PROFILE`` after ``ENROLL#``; so an organization and its users, a user and its newest tickets, a
student and its enrolments each come back from one Query. A workspace's projects are read newest first, away from
``META``, so a workspace and its projects are two requests sent at once.

Parents carry counters of their members (``projectCount``, ``userCount``, ``ticketCount``, ``courseCount``,
``enrolledCount``) and every item a ``version``; both are plain attributes, absent on items another tool wrote.
A ``TOKEN#`` item records a mutation applied with a client token, so retrying it applies it once.
"""

from __future__ import annotations

from gateway.config import DEFAULT_TABLE
from gateway.guard import Tenancy
from gateway.model import Collection, Entity, Index, KeyShape, Link, Model
from gateway.writes import Counted, WriteModel

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")

WORKSPACE = Entity(
    "Workspace",
    {None: KeyShape.of("WS#{workspaceId}", "META")},
    {"displayName": "S", "region": "S", "seatLimit": "INT", "projectCount": "INT", "version": "INT"},
)
PROJECT = Entity(
    "Project",
    {None: KeyShape.of("WS#{workspaceId}", "PROJ#{projectId}")},
    {"title": "S", "status": "S", "createdBy": "S", "version": "INT"},
)
ORGANIZATION = Entity(
    "Organization",
    {None: KeyShape.of("ORG#{orgName}", "METADATA#{orgName}")},
    {"name": "S", "subscriptionLevel": "S", "userCount": "INT", "version": "INT"},
)
USER = Entity(
    "User",
    {
        None: KeyShape.of("ORG#{orgName}", "USER#{username}"),
        "GSI1": KeyShape.of("ORG#{orgName}#USER#{username}", "USER#{username}"),
    },
    {"username": "S", "name": "S", "role": "S", "ticketCount": "INT", "version": "INT"},
)
TICKET = Entity(
    "Ticket",
    {
        None: KeyShape.of("TICKET#{ticketId}", "TICKET#{ticketId}"),
        "GSI1": KeyShape.of("ORG#{orgName}#USER#{username}", "TICKET#{ticketId}"),
    },
    {"title": "S", "status": "S", "version": "INT"},
)
STUDENT = Entity(
    "Student",
    {None: KeyShape.of("STU#{studentId}", "PROFILE")},
    {"name": "S", "year": "INT", "major": "S", "courseCount": "INT", "version": "INT"},
)
COURSE = Entity(
    "Course",
    {None: KeyShape.of("CRS#{courseId}", "METADATA")},
    {"title": "S", "credits": "INT", "term": "S", "enrolledCount": "INT", "version": "INT"},
)
# The gateway's record of an applied mutation that carried a client token (see gateway.writes.token_record).
MUTATION_TOKEN = Entity(
    "MutationToken",
    {None: KeyShape.of("TOKEN#{clientToken}", "TOKEN")},
    {"fingerprint": "S", "result": "M", "expiresAt": "N"},
)
ENROLLMENT = Entity(
    "Enrollment",
    {
        None: KeyShape.of("STU#{studentId}", "ENROLL#CRS#{courseId}"),
        "GSI1": KeyShape.of("CRS#{courseId}", "STU#{studentId}"),
    },
    {"enrolledOn": "S", "grade": "S", "version": "INT"},
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
    entities=(WORKSPACE, PROJECT, ORGANIZATION, USER, TICKET, STUDENT, COURSE, ENROLLMENT, MUTATION_TOKEN),
    collections=(WORKSPACE_PROJECTS, ORGANIZATION_USERS, USER_TICKETS, STUDENT_COURSES, COURSE_STUDENTS),
    links=(PROJECT_WORKSPACE, USER_ORGANIZATION, TICKET_USER),
    expires_attribute="expiresAt",
)

# The tenants: a caller's claims list the workspaces, organizations and students it may touch. Courses name no
# tenant: the catalog is shared, and a course's roster (students of many tenants) needs the admin role.
TENANCY = Tenancy({"workspaceId": "workspaces", "orgName": "organizations", "studentId": "students"})
TENANCY.validate(MODEL)

# Each parent carries the exact number of its members, kept by the writes that add and remove them.
PROJECT_COUNT = Counted(WORKSPACE_PROJECTS, "projectCount")
USER_COUNT = Counted(ORGANIZATION_USERS, "userCount")
TICKET_COUNT = Counted(USER_TICKETS, "ticketCount")
COURSE_COUNT = Counted(STUDENT_COURSES, "courseCount")
ENROLLED_COUNT = Counted(COURSE_STUDENTS, "enrolledCount")

WRITES = WriteModel(
    MODEL,
    counted=(PROJECT_COUNT, USER_COUNT, TICKET_COUNT, COURSE_COUNT, ENROLLED_COUNT),
    token=MUTATION_TOKEN,
)
