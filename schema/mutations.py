"""Mutations of the three domains: input types in; the item, or a typed error saying why not, out."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from enum import Enum
from typing import Annotated, Any, TypeVar

import strawberry

from gateway import writes
from gateway.context import Context
from gateway.errors import BadUserInput, Conflict, NotFound
from gateway.keys import validate_id
from gateway.model import Entity, Item
from gateway.writer import Token, Writer
from schema.enrollments import Course, Enrollment, Student
from schema.model import COURSE, ENROLLMENT, ORGANIZATION, PROJECT, STUDENT, TICKET, USER, WORKSPACE, WRITES
from schema.organizations import Organization, Ticket, User
from schema.workspaces import Project, Workspace

Info = strawberry.Info[Context, None]
T = TypeVar("T")

MAX_TEXT = 1000
UNSET: Any = strawberry.UNSET

# --- results ------------------------------------------------------------------------------------------------------


@strawberry.interface(description="An expected reason why a mutation changed nothing.")
class MutationError:
    message: str


@strawberry.type(description="The item, or a parent it needs, does not exist.")
class NotFoundError(MutationError):
    entity: str = strawberry.field(description="The kind of item that is missing, e.g. Workspace.")


@strawberry.enum
class ConflictReason(Enum):
    ALREADY_EXISTS = "ALREADY_EXISTS"
    VERSION_MISMATCH = "VERSION_MISMATCH"
    HAS_CHILDREN = "HAS_CHILDREN"
    NOT_COUNTED = "NOT_COUNTED"
    TOKEN_REUSED = "TOKEN_REUSED"
    CHANGED = "CHANGED"


@strawberry.type(description="The table is not in the state the mutation needs; nothing was changed.")
class ConflictError(MutationError):
    reason: ConflictReason
    current_version: int | None = strawberry.field(
        description="The item's version now, when it exists: read it again, or retry with this expectedVersion."
    )


@strawberry.type(description="An argument is not acceptable; no request was sent.")
class ValidationFailedError(MutationError):
    field: str


@strawberry.type
class DeletedItems:
    type: str
    count: int


@strawberry.type(description="What a delete removed: the item, and with cascade its members, by type.")
class Deleted:
    items: list[DeletedItems]


Errors = NotFoundError | ConflictError | ValidationFailedError
WorkspaceResult = Annotated[Workspace | Errors, strawberry.union("WorkspaceResult")]
ProjectResult = Annotated[Project | Errors, strawberry.union("ProjectResult")]
OrganizationResult = Annotated[Organization | Errors, strawberry.union("OrganizationResult")]
UserResult = Annotated[User | Errors, strawberry.union("UserResult")]
TicketResult = Annotated[Ticket | Errors, strawberry.union("TicketResult")]
StudentResult = Annotated[Student | Errors, strawberry.union("StudentResult")]
CourseResult = Annotated[Course | Errors, strawberry.union("CourseResult")]
EnrollmentResult = Annotated[Enrollment | Errors, strawberry.union("EnrollmentResult")]
DeleteResult = Annotated[Deleted | Errors, strawberry.union("DeleteResult")]

# --- inputs -------------------------------------------------------------------------------------------------------

EXPECTED_VERSION = "The version read last; the change applies only if the item is still at it (0: written elsewhere)."
OPTIONAL_VERSION = "When given, delete only if the item is still at this version."
CASCADE = "Also delete the members (and their members), in bounded batches; without it, a parent with members stays."
KEEP = "Omitted: unchanged; null: removed."
TOKEN = (
    "Makes the mutation idempotent for 24 hours: sent again with the same token and arguments, it is applied once "
    "and answers as the first time did; the same token with other arguments is a TOKEN_REUSED conflict."
)


@strawberry.input
class CreateWorkspaceInput:
    id: strawberry.ID
    display_name: str
    region: str | None = None
    seat_limit: int | None = None


@strawberry.input
class UpdateWorkspaceInput:
    id: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    display_name: str | None = strawberry.field(default=UNSET, description="Omitted: unchanged.")
    region: str | None = strawberry.field(default=UNSET, description=KEEP)
    seat_limit: int | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DeleteWorkspaceInput:
    id: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)
    cascade: bool = strawberry.field(default=False, description=CASCADE)


@strawberry.input
class CreateProjectInput:
    workspace_id: strawberry.ID
    title: str
    status: str | None = None
    created_by: str | None = None


@strawberry.input
class UpdateProjectInput:
    workspace_id: strawberry.ID
    id: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    title: str | None = strawberry.field(default=UNSET, description="Omitted: unchanged.")
    status: str | None = strawberry.field(default=UNSET, description=KEEP)
    created_by: str | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DeleteProjectInput:
    workspace_id: strawberry.ID
    id: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)


@strawberry.input
class CreateOrganizationInput:
    name: strawberry.ID
    subscription_level: str | None = None


@strawberry.input
class UpdateOrganizationInput:
    name: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    subscription_level: str | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DeleteOrganizationInput:
    name: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)
    cascade: bool = strawberry.field(default=False, description=CASCADE)


@strawberry.input
class CreateUserInput:
    organization: strawberry.ID
    username: strawberry.ID
    name: str | None = None
    role: str | None = None


@strawberry.input
class UpdateUserInput:
    organization: strawberry.ID
    username: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    name: str | None = strawberry.field(default=UNSET, description=KEEP)
    role: str | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DeleteUserInput:
    organization: strawberry.ID
    username: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)
    cascade: bool = strawberry.field(default=False, description=CASCADE)


@strawberry.input
class CreateTicketInput:
    organization: strawberry.ID
    username: strawberry.ID
    title: str
    status: str | None = "open"


@strawberry.input
class UpdateTicketInput:
    id: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    title: str | None = strawberry.field(default=UNSET, description="Omitted: unchanged.")
    status: str | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DeleteTicketInput:
    id: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)


@strawberry.input
class CreateStudentInput:
    id: strawberry.ID
    name: str
    year: int | None = None
    major: str | None = None


@strawberry.input
class UpdateStudentInput:
    id: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    name: str | None = strawberry.field(default=UNSET, description="Omitted: unchanged.")
    year: int | None = strawberry.field(default=UNSET, description=KEEP)
    major: str | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DeleteStudentInput:
    id: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)
    cascade: bool = strawberry.field(default=False, description="Also drop the student's enrolments.")


@strawberry.input
class CreateCourseInput:
    id: strawberry.ID
    title: str
    credits: int | None = None
    term: str | None = None


@strawberry.input
class UpdateCourseInput:
    id: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    title: str | None = strawberry.field(default=UNSET, description="Omitted: unchanged.")
    credits: int | None = strawberry.field(default=UNSET, description=KEEP)
    term: str | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DeleteCourseInput:
    id: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)
    cascade: bool = strawberry.field(default=False, description="Also drop the course's enrolments.")


@strawberry.input
class EnrollInput:
    student_id: strawberry.ID
    course_id: strawberry.ID
    grade: str | None = None


@strawberry.input
class UpdateEnrollmentInput:
    student_id: strawberry.ID
    course_id: strawberry.ID
    expected_version: int = strawberry.field(description=EXPECTED_VERSION)
    grade: str | None = strawberry.field(default=UNSET, description=KEEP)


@strawberry.input
class DropInput:
    student_id: strawberry.ID
    course_id: strawberry.ID
    expected_version: int | None = strawberry.field(default=None, description=OPTIONAL_VERSION)


# --- attribute rules ----------------------------------------------------------------------------------------------

Check = Callable[[Any, str], Any]


def _text(required: bool = False) -> Check:
    def check(value: Any, field: str) -> Any:
        if value is None:
            if required:
                raise BadUserInput(f"{field} may not be null", argument=field)
            return None
        if not value.strip() or len(value) > MAX_TEXT:
            raise BadUserInput(f"{field} must be 1 to {MAX_TEXT} characters, not blank", argument=field)
        return value

    return check


def _whole(low: int, high: int) -> Check:
    def check(value: Any, field: str) -> Any:
        if value is not None and not low <= value <= high:
            raise BadUserInput(f"{field} must be between {low} and {high}", argument=field)
        return value

    return check


# Input field -> (stored attribute, its rule); the GraphQL names are the stored ones.
_WORKSPACE = {
    "display_name": ("displayName", _text(required=True)),
    "region": ("region", _text()),
    "seat_limit": ("seatLimit", _whole(0, 1_000_000)),
}
_PROJECT = {
    "title": ("title", _text(required=True)),
    "status": ("status", _text()),
    "created_by": ("createdBy", _text()),
}
_ORGANIZATION = {"subscription_level": ("subscriptionLevel", _text())}
_USER = {"name": ("name", _text()), "role": ("role", _text())}
_TICKET = {"title": ("title", _text(required=True)), "status": ("status", _text())}
_STUDENT = {"name": ("name", _text(required=True)), "year": ("year", _whole(1, 12)), "major": ("major", _text())}
_COURSE = {"title": ("title", _text(required=True)), "credits": ("credits", _whole(0, 100)), "term": ("term", _text())}
_ENROLLMENT = {"grade": ("grade", _text())}


Rules = Mapping[str, tuple[str, Check]]


def _attributes(data: object, rules: Rules) -> dict[str, Any]:
    """The stored attributes an input sets; fields left out of an update input are not among them."""
    out: dict[str, Any] = {}
    for name, (attribute, check) in rules.items():
        value = getattr(data, name)
        if value is not UNSET:
            out[attribute] = check(value, attribute)
    return out


# --- running a mutation -------------------------------------------------------------------------------------------


RawIds = Mapping[str, tuple[str, str]]
"""Id field -> (the value given, the argument it came from), validated before any request."""


def _writer(info: Info) -> Writer:
    # Mutations run one after another: what an earlier one (or the request's reads) left cached is stale now.
    info.context.reader.forget()
    return Writer(info.context.reader.store, WRITES, info.context.ledger, info.context.guard)


def _ids(raw: RawIds) -> dict[str, str]:
    return {name: validate_id(value, argument) for name, (value, argument) in raw.items()}


def _token(info: Info, client_token: str | None, data: object) -> Token | None:
    if client_token is None:
        return None
    arguments = dataclasses.asdict(data)  # type: ignore[call-overload]
    caller = info.context.guard.principal.subject
    return Token(validate_id(client_token, "clientToken"), writes.fingerprint(info.field_name, arguments, caller))


def _version(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise BadUserInput("expectedVersion may not be negative", argument="expectedVersion")
    return value


def _node(info: Info, entity: Entity, make: Callable[[dict[str, str], Item], T], item: Item) -> T:
    ids = info.context.reader.model.ids_of(entity, item)
    if ids is None:
        raise NotFound(f"the {entity.name} written cannot be read back", entity=entity.name)
    return make(ids, item)


async def _run(work: Awaitable[T]) -> T | Errors:
    """The mutation's result, or the typed error for an expected refusal; anything else is a GraphQL error."""
    try:
        return await work
    except BadUserInput as error:
        return ValidationFailedError(message=error.message, field=str(error.extensions.get("argument", "")))
    except NotFound as error:
        return NotFoundError(message=error.message, entity=str(error.extensions.get("entity", "")))
    except Conflict as error:
        return ConflictError(
            message=error.message,
            reason=ConflictReason(error.extensions.get("reason", "CHANGED")),
            current_version=error.extensions.get("currentVersion"),
        )


async def _create(
    info: Info,
    entity: Entity,
    make: Callable[[dict[str, str], Item], T],
    raw_ids: RawIds,
    data: object,
    rules: Rules,
    client_token: str | None,
    mint: str | None = None,
) -> T:
    ids = _ids(raw_ids)
    if mint is not None:
        ids[mint] = writes.mint_id()
    attributes = {**_attributes(data, rules), **_fixed(entity, ids)}
    token = _token(info, client_token, data)
    return _node(info, entity, make, await _writer(info).create(entity, ids, attributes, token))


async def _update(
    info: Info,
    entity: Entity,
    make: Callable[[dict[str, str], Item], T],
    raw_ids: RawIds,
    data: Any,
    rules: Rules,
    client_token: str | None,
) -> T:
    ids = _ids(raw_ids)
    changes = _attributes(data, rules)
    version = _version(data.expected_version)
    token = _token(info, client_token, data)
    return _node(info, entity, make, await _writer(info).update(entity, ids, changes, version or 0, token))


async def _delete(info: Info, entity: Entity, raw_ids: RawIds, data: Any, client_token: str | None) -> Deleted:
    ids = _ids(raw_ids)
    version = _version(data.expected_version)
    token = _token(info, client_token, data)
    cascade = bool(getattr(data, "cascade", False))
    counts = await _writer(info).delete(entity, ids, expected_version=version, cascade=cascade, token=token)
    return Deleted(items=[DeletedItems(type=name, count=count) for name, count in sorted(counts.items())])


def _fixed(entity: Entity, ids: Mapping[str, str]) -> dict[str, Any]:
    """Attributes the key design repeats from the ids: a user's username, an organization's name."""
    if entity is USER:
        return {"username": ids["username"]}
    if entity is ORGANIZATION:
        return {"name": ids["orgName"]}
    if entity is ENROLLMENT:
        return {"enrolledOn": writes.today()}
    return {}


Token_ = Annotated[str | None, strawberry.argument(description=TOKEN)]

# --- the Mutation type --------------------------------------------------------------------------------------------


@strawberry.type
class Mutation:
    @strawberry.mutation(description="A new workspace; a conflict if the id is taken.")
    async def create_workspace(
        self, info: Info, input: CreateWorkspaceInput, client_token: Token_ = None
    ) -> WorkspaceResult:
        ids = {"workspaceId": (input.id, "id")}
        return await _run(_create(info, WORKSPACE, Workspace.from_item, ids, input, _WORKSPACE, client_token))

    @strawberry.mutation(description="Change a workspace if it is still at expectedVersion.")
    async def update_workspace(
        self, info: Info, input: UpdateWorkspaceInput, client_token: Token_ = None
    ) -> WorkspaceResult:
        ids = {"workspaceId": (input.id, "id")}
        return await _run(_update(info, WORKSPACE, Workspace.from_item, ids, input, _WORKSPACE, client_token))

    @strawberry.mutation(description="Delete a workspace; one with projects only with cascade.")
    async def delete_workspace(
        self, info: Info, input: DeleteWorkspaceInput, client_token: Token_ = None
    ) -> DeleteResult:
        return await _run(_delete(info, WORKSPACE, {"workspaceId": (input.id, "id")}, input, client_token))

    @strawberry.mutation(description="A new project, with a time-ordered id; the workspace must exist.")
    async def create_project(self, info: Info, input: CreateProjectInput, client_token: Token_ = None) -> ProjectResult:
        ids = {"workspaceId": (input.workspace_id, "workspaceId")}
        return await _run(
            _create(info, PROJECT, Project.from_item, ids, input, _PROJECT, client_token, mint="projectId")
        )

    @strawberry.mutation(description="Change a project if it is still at expectedVersion.")
    async def update_project(self, info: Info, input: UpdateProjectInput, client_token: Token_ = None) -> ProjectResult:
        ids = {"workspaceId": (input.workspace_id, "workspaceId"), "projectId": (input.id, "id")}
        return await _run(_update(info, PROJECT, Project.from_item, ids, input, _PROJECT, client_token))

    @strawberry.mutation(description="Delete a project.")
    async def delete_project(self, info: Info, input: DeleteProjectInput, client_token: Token_ = None) -> DeleteResult:
        ids = {"workspaceId": (input.workspace_id, "workspaceId"), "projectId": (input.id, "id")}
        return await _run(_delete(info, PROJECT, ids, input, client_token))

    @strawberry.mutation(description="A new organization; a conflict if the name is taken.")
    async def create_organization(
        self, info: Info, input: CreateOrganizationInput, client_token: Token_ = None
    ) -> OrganizationResult:
        ids = {"orgName": (input.name, "name")}
        return await _run(_create(info, ORGANIZATION, Organization.from_item, ids, input, _ORGANIZATION, client_token))

    @strawberry.mutation(description="Change an organization if it is still at expectedVersion.")
    async def update_organization(
        self, info: Info, input: UpdateOrganizationInput, client_token: Token_ = None
    ) -> OrganizationResult:
        ids = {"orgName": (input.name, "name")}
        return await _run(_update(info, ORGANIZATION, Organization.from_item, ids, input, _ORGANIZATION, client_token))

    @strawberry.mutation(description="Delete an organization; one with users only with cascade (users, tickets).")
    async def delete_organization(
        self, info: Info, input: DeleteOrganizationInput, client_token: Token_ = None
    ) -> DeleteResult:
        return await _run(_delete(info, ORGANIZATION, {"orgName": (input.name, "name")}, input, client_token))

    @strawberry.mutation(description="A new user of an organization that exists.")
    async def create_user(self, info: Info, input: CreateUserInput, client_token: Token_ = None) -> UserResult:
        ids = {"orgName": (input.organization, "organization"), "username": (input.username, "username")}
        return await _run(_create(info, USER, User.from_item, ids, input, _USER, client_token))

    @strawberry.mutation(description="Change a user if it is still at expectedVersion.")
    async def update_user(self, info: Info, input: UpdateUserInput, client_token: Token_ = None) -> UserResult:
        ids = {"orgName": (input.organization, "organization"), "username": (input.username, "username")}
        return await _run(_update(info, USER, User.from_item, ids, input, _USER, client_token))

    @strawberry.mutation(description="Delete a user; one with tickets only with cascade.")
    async def delete_user(self, info: Info, input: DeleteUserInput, client_token: Token_ = None) -> DeleteResult:
        ids = {"orgName": (input.organization, "organization"), "username": (input.username, "username")}
        return await _run(_delete(info, USER, ids, input, client_token))

    @strawberry.mutation(description="A new ticket of a user that exists, with a time-ordered id.")
    async def create_ticket(self, info: Info, input: CreateTicketInput, client_token: Token_ = None) -> TicketResult:
        ids = {"orgName": (input.organization, "organization"), "username": (input.username, "username")}
        return await _run(_create(info, TICKET, Ticket.from_item, ids, input, _TICKET, client_token, mint="ticketId"))

    @strawberry.mutation(description="Change a ticket if it is still at expectedVersion.")
    async def update_ticket(self, info: Info, input: UpdateTicketInput, client_token: Token_ = None) -> TicketResult:
        return await _run(
            _update(info, TICKET, Ticket.from_item, {"ticketId": (input.id, "id")}, input, _TICKET, client_token)
        )

    @strawberry.mutation(description="Delete a ticket.")
    async def delete_ticket(self, info: Info, input: DeleteTicketInput, client_token: Token_ = None) -> DeleteResult:
        return await _run(_delete(info, TICKET, {"ticketId": (input.id, "id")}, input, client_token))

    @strawberry.mutation(description="A new student; a conflict if the id is taken.")
    async def create_student(self, info: Info, input: CreateStudentInput, client_token: Token_ = None) -> StudentResult:
        ids = {"studentId": (input.id, "id")}
        return await _run(_create(info, STUDENT, Student.from_item, ids, input, _STUDENT, client_token))

    @strawberry.mutation(description="Change a student if it is still at expectedVersion.")
    async def update_student(self, info: Info, input: UpdateStudentInput, client_token: Token_ = None) -> StudentResult:
        ids = {"studentId": (input.id, "id")}
        return await _run(_update(info, STUDENT, Student.from_item, ids, input, _STUDENT, client_token))

    @strawberry.mutation(description="Delete a student; one with enrolments only with cascade.")
    async def delete_student(self, info: Info, input: DeleteStudentInput, client_token: Token_ = None) -> DeleteResult:
        return await _run(_delete(info, STUDENT, {"studentId": (input.id, "id")}, input, client_token))

    @strawberry.mutation(description="A new course; a conflict if the id is taken.")
    async def create_course(self, info: Info, input: CreateCourseInput, client_token: Token_ = None) -> CourseResult:
        ids = {"courseId": (input.id, "id")}
        return await _run(_create(info, COURSE, Course.from_item, ids, input, _COURSE, client_token))

    @strawberry.mutation(description="Change a course if it is still at expectedVersion.")
    async def update_course(self, info: Info, input: UpdateCourseInput, client_token: Token_ = None) -> CourseResult:
        ids = {"courseId": (input.id, "id")}
        return await _run(_update(info, COURSE, Course.from_item, ids, input, _COURSE, client_token))

    @strawberry.mutation(description="Delete a course; one with enrolments only with cascade.")
    async def delete_course(self, info: Info, input: DeleteCourseInput, client_token: Token_ = None) -> DeleteResult:
        return await _run(_delete(info, COURSE, {"courseId": (input.id, "id")}, input, client_token))

    @strawberry.mutation(description="Enrol a student in a course, both existing; enrolling twice is a conflict.")
    async def enroll(self, info: Info, input: EnrollInput, client_token: Token_ = None) -> EnrollmentResult:
        return await _run(
            _create(info, ENROLLMENT, Enrollment.from_item, _pair(input), input, _ENROLLMENT, client_token)
        )

    @strawberry.mutation(description="Change an enrolment's grade if it is still at expectedVersion.")
    async def update_enrollment(
        self, info: Info, input: UpdateEnrollmentInput, client_token: Token_ = None
    ) -> EnrollmentResult:
        return await _run(
            _update(info, ENROLLMENT, Enrollment.from_item, _pair(input), input, _ENROLLMENT, client_token)
        )

    @strawberry.mutation(description="Remove exactly this enrolment, and count it out on both sides.")
    async def drop(self, info: Info, input: DropInput, client_token: Token_ = None) -> DeleteResult:
        return await _run(_delete(info, ENROLLMENT, _pair(input), input, client_token))


def _pair(data: Any) -> RawIds:
    return {"studentId": (data.student_id, "studentId"), "courseId": (data.course_id, "courseId")}
