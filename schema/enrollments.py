"""Students and courses, many-to-many through enrolment edge items and the inverted index GSI1."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import strawberry

from gateway.context import Context
from gateway.keys import validate_id
from gateway.loaders import Member, Page
from gateway.model import Entity, attribute_values
from gateway.plan import batch_ids
from schema.model import (
    COURSE,
    COURSE_COUNT,
    COURSE_STUDENTS,
    ENROLLED_COUNT,
    ENROLLMENT,
    STUDENT,
    STUDENT_COURSES,
)
from schema.relay import TOTAL_COUNT, VERSION, PageInfo, lookahead, page_info, total_count

Info = strawberry.Info[Context, None]
N = TypeVar("N")


class _Unread:
    """An edge's node that its connection did not read: its resolver reads it."""


UNREAD = _Unread()


@strawberry.type
class Student:
    id: strawberry.ID
    name: str | None
    year: int | None
    major: str | None
    course_count: int | None = strawberry.field(
        description="How many courses the student takes; null until `tablegraph recount` counted a foreign table."
    )
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> Student:
        values = attribute_values(STUDENT, item)
        return cls(
            id=strawberry.ID(ids["studentId"]),
            name=values["name"],
            year=values["year"],
            major=values["major"],
            course_count=values["courseCount"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field(description="Courses the student is enrolled in, in descending course id order.")
    async def courses(self, info: Info, first: int | None = None, after: str | None = None) -> EnrolledCourseConnection:
        page = await info.context.reader.page(STUDENT_COURSES, self.ids, first, after)
        courses = await _read_nodes(info, page, COURSE, Course.from_item)
        return EnrolledCourseConnection.of(page, self.ids, courses)


@strawberry.type
class Course:
    id: strawberry.ID
    title: str | None
    credits: int | None
    term: str | None
    enrolled_count: int | None = strawberry.field(
        description="How many students are enrolled; null until `tablegraph recount` counted a foreign table."
    )
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> Course:
        values = attribute_values(COURSE, item)
        return cls(
            id=strawberry.ID(ids["courseId"]),
            title=values["title"],
            credits=values["credits"],
            term=values["term"],
            enrolled_count=values["enrolledCount"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field(description="Students enrolled in the course, by student id.")
    async def students(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> EnrolledStudentConnection:
        page = await info.context.reader.page(COURSE_STUDENTS, self.ids, first, after)
        students = await _read_nodes(info, page, STUDENT, Student.from_item)
        return EnrolledStudentConnection.of(page, self.ids, students)


@strawberry.type(description="An enrolment: the edge between a student and a course, with its own data.")
class Enrollment:
    student_id: strawberry.ID
    course_id: strawberry.ID
    grade: str | None
    enrolled_on: str | None
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> Enrollment:
        values = attribute_values(ENROLLMENT, item)
        return cls(
            student_id=strawberry.ID(ids["studentId"]),
            course_id=strawberry.ID(ids["courseId"]),
            grade=values["grade"],
            enrolled_on=values["enrolledOn"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field
    async def student(self, info: Info) -> Student | None:
        return await _student(info, self.ids)

    @strawberry.field
    async def course(self, info: Info) -> Course | None:
        return await _course(info, self.ids)


@strawberry.type
class EnrolledCourseEdge:
    member: strawberry.Private[Member]

    @strawberry.field
    def cursor(self) -> str:
        return self.member.cursor

    grade: str | None
    enrolled_on: str | None
    version: int = strawberry.field(description="The enrolment's version, for updateEnrollment and drop.")
    ids: strawberry.Private[dict[str, str]]
    course: strawberry.Private[Course | _Unread | None] = UNREAD

    @strawberry.field(description="The course; null if the enrolment points at a course that no longer exists.")
    def node(self, info: Info) -> Course | None:
        if isinstance(self.course, _Unread):
            # Read one by one, batched, only where the connection did not see the field coming.
            return cast("Course | None", _course(info, self.ids))
        return self.course


@strawberry.type
class EnrolledCourseConnection:
    edges: list[EnrolledCourseEdge]
    page_info: PageInfo
    student_ids: strawberry.Private[dict[str, str]]

    @strawberry.field(description=TOTAL_COUNT)
    async def total_count(self, info: Info) -> int | None:
        return await total_count(info, COURSE_COUNT, self.student_ids)

    @strawberry.field
    def nodes(self, info: Info) -> list[Course | None]:
        return _nodes(info, [(edge.course, edge.ids) for edge in self.edges], _course)

    @classmethod
    def of(
        cls, page: Page, student_ids: dict[str, str], courses: list[Course | None] | None
    ) -> EnrolledCourseConnection:
        found: list[Course | _Unread | None] = [UNREAD] * len(page.members) if courses is None else [*courses]
        return cls(
            edges=[
                EnrolledCourseEdge(member=m, ids=m.ids, course=course, **_edge_data(m))
                for m, course in zip(page.members, found, strict=True)
            ],
            page_info=page_info(page),
            student_ids=student_ids,
        )


@strawberry.type
class EnrolledStudentEdge:
    member: strawberry.Private[Member]

    @strawberry.field
    def cursor(self) -> str:
        return self.member.cursor

    grade: str | None
    enrolled_on: str | None
    version: int = strawberry.field(description="The enrolment's version, for updateEnrollment and drop.")
    ids: strawberry.Private[dict[str, str]]
    student: strawberry.Private[Student | _Unread | None] = UNREAD

    @strawberry.field(description="The student; null if the enrolment points at a student that no longer exists.")
    def node(self, info: Info) -> Student | None:
        if isinstance(self.student, _Unread):
            return cast("Student | None", _student(info, self.ids))
        return self.student


@strawberry.type
class EnrolledStudentConnection:
    edges: list[EnrolledStudentEdge]
    page_info: PageInfo
    course_ids: strawberry.Private[dict[str, str]]

    @strawberry.field(description=TOTAL_COUNT)
    async def total_count(self, info: Info) -> int | None:
        return await total_count(info, ENROLLED_COUNT, self.course_ids)

    @strawberry.field
    def nodes(self, info: Info) -> list[Student | None]:
        return _nodes(info, [(edge.student, edge.ids) for edge in self.edges], _student)

    @classmethod
    def of(
        cls, page: Page, course_ids: dict[str, str], students: list[Student | None] | None
    ) -> EnrolledStudentConnection:
        found: list[Student | _Unread | None] = [UNREAD] * len(page.members) if students is None else [*students]
        return cls(
            edges=[
                EnrolledStudentEdge(member=m, ids=m.ids, student=student, **_edge_data(m))
                for m, student in zip(page.members, found, strict=True)
            ],
            page_info=page_info(page),
            course_ids=course_ids,
        )


async def _read_nodes(
    info: Info, page: Page, entity: Entity, build: Callable[[dict[str, str], dict[str, Any]], N]
) -> list[N | None] | None:
    """The nodes of a page's edges, read together when the query asks for them (``nodes`` or ``edges.node``).

    One BatchGetItem either way; read here, the nodes are plain values to the edges rather than a hundred
    resolvers each awaiting its own load (a quarter of the CPU of a 100-edge page). Without the fields in
    sight (an unusual selection), the edges' resolvers read them.
    """
    selection = lookahead(info)
    wanted = any(
        field.name == "nodes" or (field.name == "edges" and any(child.name == "node" for child in field.children()))
        for field in selection
    )
    if not wanted:
        return None
    items = await info.context.reader.get_many(entity, [member.ids for member in page.members])
    return [build(m.ids, item) if item else None for m, item in zip(page.members, items, strict=True)]


def _nodes(
    info: Info,
    edges: list[tuple[N | _Unread | None, dict[str, str]]],
    read: Callable[[Info, dict[str, str]], Awaitable[N | None]],
) -> list[N | None]:
    """The nodes of a connection: as read with the page, or read now (an awaitable) when they were not."""
    if not any(isinstance(node, _Unread) for node, _ in edges):
        return cast("list[N | None]", [node for node, _ in edges])

    async def each() -> list[N | None]:
        return list(await asyncio.gather(*(read(info, ids) for _, ids in edges)))

    return cast("list[N | None]", each())


def _edge_data(member: Member) -> dict[str, Any]:
    values = attribute_values(ENROLLMENT, member.item)
    return {"grade": values["grade"], "enrolled_on": values["enrolledOn"], "version": values["version"] or 0}


async def _student(info: Info, ids: dict[str, str]) -> Student | None:
    item = await info.context.reader.get(STUDENT, ids)
    return Student.from_item(ids, item) if item else None


async def _course(info: Info, ids: dict[str, str]) -> Course | None:
    item = await info.context.reader.get(COURSE, ids)
    return Course.from_item(ids, item) if item else None


@strawberry.type
class EnrollmentQueries:
    @strawberry.field
    async def student(self, info: Info, id: strawberry.ID) -> Student | None:
        ids = {"studentId": validate_id(id, "id")}
        item = await info.context.reader.fetch(STUDENT, ids, lookahead(info), {"courses": STUDENT_COURSES})
        return Student.from_item(ids, item) if item else None

    @strawberry.field
    async def course(self, info: Info, id: strawberry.ID) -> Course | None:
        ids = {"courseId": validate_id(id, "id")}
        item = await info.context.reader.fetch(COURSE, ids, lookahead(info), {"students": COURSE_STUDENTS})
        return Course.from_item(ids, item) if item else None

    @strawberry.field(description="Students by id, in the order asked; null for ids that do not exist.")
    async def students(self, info: Info, ids: list[strawberry.ID]) -> list[Student | None]:
        keys = [{"studentId": one} for one in batch_ids(ids, "ids")]
        items = await info.context.reader.get_many(STUDENT, keys)
        return [Student.from_item(k, item) if item else None for k, item in zip(keys, items, strict=True)]

    @strawberry.field(description="Courses by id, in the order asked; null for ids that do not exist.")
    async def courses(self, info: Info, ids: list[strawberry.ID]) -> list[Course | None]:
        keys = [{"courseId": one} for one in batch_ids(ids, "ids")]
        items = await info.context.reader.get_many(COURSE, keys)
        return [Course.from_item(k, item) if item else None for k, item in zip(keys, items, strict=True)]

    @strawberry.field
    async def enrollment(self, info: Info, student_id: strawberry.ID, course_id: strawberry.ID) -> Enrollment | None:
        ids = {"studentId": validate_id(student_id, "studentId"), "courseId": validate_id(course_id, "courseId")}
        item = await info.context.reader.fetch(
            ENROLLMENT, ids, lookahead(info), {}, {"student": STUDENT, "course": COURSE}
        )
        return Enrollment.from_item(ids, item) if item else None
