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
| (token)    | TOKEN#<tokenKey>    | TOKEN                  |                                |                   |

Why the sort keys look like this: ``META``/``METADATA#`` sort before ``PROJ#``/``USER#`` and ``USER#`` sorts after
``TICKET#``, ``PROFILE`` after ``ENROLL#``; so an organization and its users, a user and its newest tickets, a
student and its enrolments each come back from one Query. A workspace's projects are read newest first, away from
``META``, so a workspace and its projects are two requests sent at once.

Parents carry counters of their members (``projectCount``, ``userCount``, ``ticketCount``, ``courseCount``,
``enrolledCount``) and every item a ``version``; both are plain attributes, absent on items another tool wrote.
A ``TOKEN#`` item records a mutation applied with a client token, so retrying it applies it once; its key is a
digest of the caller and the token, so tokens of different callers never meet.
"""

from __future__ import annotations

from gateway import Attribute, Collection, Entity, Index, KeyShape, Link, Model, Tenancy
from gateway.config import DEFAULT_TABLE
from gateway.design.declaration import token_entity, write_model

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")


def _text(description: str | None = None, *, required: bool = False, default: str | None = None) -> Attribute:
    return Attribute("S", description, required=required, default=default)


def _counter(what: str) -> Attribute:
    return Attribute(
        "INT",
        f"How many {what}, kept exact by the writes; null on an item another tool wrote until "
        "`tablegraph recount` counted it.",
        writable=False,
    )


WORKSPACE = Entity(
    "Workspace",
    {None: KeyShape.of("WS#{workspaceId}", "META")},
    {
        "displayName": _text("The name people see.", required=True),
        "region": _text("The AWS region the workspace's data lives in."),
        "seatLimit": Attribute("INT", "How many members the workspace may have.", minimum=0, maximum=1_000_000),
        "projectCount": _counter("projects the workspace has"),
    },
    description="A tenant's workspace: one partition holds it and its projects.",
)
PROJECT = Entity(
    "Project",
    {None: KeyShape.of("WS#{workspaceId}", "PROJ#{projectId}")},
    {
        "title": _text(required=True),
        "status": Attribute(
            "S",
            "Where the project stands.",
            enum={
                "active": "Being worked on.",
                "paused": "On hold; it may resume.",
                "archived": "Finished or abandoned; kept for the record.",
            },
        ),
        "createdBy": _text("Who created the project."),
    },
    description="A project of a workspace; its id sorts by creation time.",
    mint="projectId",
)
ORGANIZATION = Entity(
    "Organization",
    {None: KeyShape.of("ORG#{orgName}", "METADATA#{orgName}")},
    {
        "name": _text("The organization's display name."),
        "subscriptionLevel": _text("The plan the organization pays for."),
        "userCount": _counter("users the organization has"),
    },
    description="A tenant's organization: one partition holds it and its users.",
)
USER = Entity(
    "User",
    {
        None: KeyShape.of("ORG#{orgName}", "USER#{username}"),
        "GSI1": KeyShape.of("ORG#{orgName}#USER#{username}", "USER#{username}"),
    },
    {
        # Stored for tools that read the item alone; GraphQL serves the id field of the same name.
        "username": Attribute("S", from_id="username"),
        "name": _text("The user's full name."),
        "role": _text("The user's role in the organization."),
        "ticketCount": _counter("tickets the user has"),
    },
    description="A member of an organization.",
)
TICKET = Entity(
    "Ticket",
    {
        None: KeyShape.of("TICKET#{ticketId}", "TICKET#{ticketId}"),
        "GSI1": KeyShape.of("ORG#{orgName}#USER#{username}", "TICKET#{ticketId}"),
    },
    {
        "title": _text(required=True),
        "status": Attribute(
            "S",
            "Whether the ticket still needs work.",
            default="open",
            enum={"open": "Needs work.", "closed": "Resolved, or given up on."},
        ),
    },
    description="A user's ticket, readable by its id alone; its id sorts by creation time.",
    mint="ticketId",
)
STUDENT = Entity(
    "Student",
    {None: KeyShape.of("STU#{studentId}", "PROFILE")},
    {
        "name": _text(required=True),
        "year": Attribute("INT", "The year of study.", minimum=1, maximum=12),
        "major": _text(),
        "courseCount": _counter("courses the student is enrolled in"),
    },
    description="A student, enrolled in courses through enrolment edges.",
)
COURSE = Entity(
    "Course",
    {None: KeyShape.of("CRS#{courseId}", "METADATA")},
    {
        "title": _text(required=True),
        "credits": Attribute("INT", minimum=0, maximum=100),
        "term": _text("The term the course is taught in."),
        "enrolledCount": _counter("students are enrolled"),
    },
    description="A course of the shared catalog: every tenant reads it, only an admin changes it.",
)
# The gateway's record of an applied mutation that carried a client token (see gateway.writes.token_record).
MUTATION_TOKEN = token_entity()
ENROLLMENT = Entity(
    "Enrollment",
    {
        None: KeyShape.of("STU#{studentId}", "ENROLL#CRS#{courseId}"),
        "GSI1": KeyShape.of("CRS#{courseId}", "STU#{studentId}"),
    },
    {
        "enrolledOn": Attribute("DATE", "The UTC date of the enrolment.", on_create="today"),
        "grade": _text("The grade, once there is one."),
    },
    description="An enrolment: the edge between a student and a course, with its own data.",
    verbs={"create": "enroll", "update": "updateEnrollment", "delete": "drop"},
)

WORKSPACE_PROJECTS = Collection(
    "Workspace.projects",
    WORKSPACE,
    PROJECT,
    ascending=False,
    counter="projectCount",
    description="Newest first.",
    filters=("status", "title", "createdBy"),
)
ORGANIZATION_USERS = Collection(
    "Organization.users", ORGANIZATION, USER, counter="userCount", description="By username.", filters=("role", "name")
)
USER_TICKETS = Collection(
    "User.tickets",
    USER,
    TICKET,
    index="GSI1",
    ascending=False,
    counter="ticketCount",
    description="Newest first.",
    filters=("status", "title"),
)
# The profile sorts after the enrolments, so a student's courses are read in descending key order.
STUDENT_COURSES = Collection(
    "Student.courses",
    STUDENT,
    ENROLLMENT,
    ascending=False,
    target=COURSE,
    counter="courseCount",
    description="The courses the student is enrolled in, by course id descending.",
    filters=("grade", "enrolledOn"),
)
COURSE_STUDENTS = Collection(
    "Course.students",
    COURSE,
    ENROLLMENT,
    index="GSI1",
    target=STUDENT,
    counter="enrolledCount",
    description="The students enrolled in the course, by student id.",
    filters=("grade", "enrolledOn"),
)

PROJECT_WORKSPACE = Link("Project.workspace", PROJECT, WORKSPACE)
USER_ORGANIZATION = Link("User.organization", USER, ORGANIZATION)
TICKET_USER = Link("Ticket.user", TICKET, USER, "The user the ticket belongs to; its keys are on the ticket.")
ENROLLMENT_STUDENT = Link("Enrollment.student", ENROLLMENT, STUDENT)
ENROLLMENT_COURSE = Link("Enrollment.course", ENROLLMENT, COURSE)

MODEL = Model(
    table=DEFAULT_TABLE,
    indexes=(TABLE, GSI1),
    entities=(WORKSPACE, PROJECT, ORGANIZATION, USER, TICKET, STUDENT, COURSE, ENROLLMENT, MUTATION_TOKEN),
    collections=(WORKSPACE_PROJECTS, ORGANIZATION_USERS, USER_TICKETS, STUDENT_COURSES, COURSE_STUDENTS),
    links=(PROJECT_WORKSPACE, USER_ORGANIZATION, TICKET_USER, ENROLLMENT_STUDENT, ENROLLMENT_COURSE),
    expires_attribute="expiresAt",
)

# The tenants: a caller's claims list the workspaces, organizations and students it may touch. Courses name no
# tenant: the catalog is shared, and a course's roster (students of many tenants) needs the admin role.
TENANCY = Tenancy({"workspaceId": "workspaces", "orgName": "organizations", "studentId": "students"})


# Each parent carries the exact number of its members, kept by the writes that add and remove them.
WRITES = write_model(MODEL)
PROJECT_COUNT, USER_COUNT, TICKET_COUNT, COURSE_COUNT, ENROLLED_COUNT = WRITES.counted
