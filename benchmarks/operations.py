"""The benchmark's operations as GraphQL requests over the probe data, with their target plans: DESIGN.md's eight
canonical operations, then nested ones that go from a child to its parent and back down to the parent's children."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from graphql import (
    REMOVE,
    ArgumentNode,
    BooleanValueNode,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    IntValueNode,
    ListTypeNode,
    ListValueNode,
    NamedTypeNode,
    NameNode,
    NonNullTypeNode,
    OperationDefinitionNode,
    StringValueNode,
    TypeInfo,
    TypeInfoVisitor,
    TypeNode,
    ValueNode,
    VariableDefinitionNode,
    VariableNode,
    Visitor,
    build_schema,
    get_named_type,
    parse,
    print_ast,
    value_from_ast_untyped,
    visit,
)

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


_SCHEMA = Path(__file__).resolve().parent.parent / "schema" / "schema.graphql"


def twin(operation: Operation) -> Operation:
    """The operation as the other kind of client sends it: its literal arguments passed as variables (as Apollo
    Client and Relay send every operation), or, for one sent with variables, their values written out."""
    document = parse(operation.query)
    if operation.variables:
        inlined = visit(document, _Inline(operation.variables))
        return replace(operation, query=print_ast(inlined), variables={})
    schema = build_schema(_SCHEMA.read_text())
    info = TypeInfo(schema)
    lift = _Lift(info)
    lifted = visit(document, TypeInfoVisitor(info, lift))
    return replace(operation, query=print_ast(lifted), variables=lift.values)


class _Lift(Visitor):
    """Each literal argument becomes a variable of the argument's type."""

    def __init__(self, info: TypeInfo) -> None:
        super().__init__()
        self._info = info
        self.values: dict[str, Any] = {}
        self._definitions: list[VariableDefinitionNode] = []

    def enter_argument(self, node: ArgumentNode, *_: Any) -> ArgumentNode | None:
        argument = self._info.get_argument()
        if argument is None or isinstance(node.value, VariableNode):
            return None
        name = f"{node.name.value}{len(self.values)}"
        self.values[name] = value_from_ast_untyped(node.value)
        variable = VariableNode(name=NameNode(value=name))
        self._definitions.append(VariableDefinitionNode(variable=variable, type=_type_node(argument.type)))
        return ArgumentNode(name=node.name, value=variable)

    def leave_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> OperationDefinitionNode:
        return OperationDefinitionNode(
            operation=node.operation,
            name=node.name,
            variable_definitions=tuple(self._definitions),
            directives=node.directives,
            selection_set=node.selection_set,
        )


def _type_node(type_: GraphQLInputType) -> TypeNode:
    if isinstance(type_, GraphQLNonNull):
        return NonNullTypeNode(type=_nullable_node(type_.of_type))
    return _nullable_node(type_)


def _nullable_node(type_: GraphQLInputType) -> NamedTypeNode | ListTypeNode:
    if isinstance(type_, GraphQLList):
        return ListTypeNode(type=_type_node(type_.of_type))
    return NamedTypeNode(name=NameNode(value=get_named_type(type_).name))


class _Inline(Visitor):
    """Each variable replaced by its value, written out; the operation then declares none."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__()
        self._values = values

    def enter_variable_definition(self, *_: Any) -> Any:
        return REMOVE

    def enter_variable(self, node: VariableNode, *_: Any) -> ValueNode:
        return _literal(self._values[node.name.value])


def _literal(value: Any) -> ValueNode:
    if isinstance(value, list):
        return ListValueNode(values=tuple(_literal(one) for one in value))
    if isinstance(value, bool):
        return BooleanValueNode(value=value)
    if isinstance(value, int):
        return IntValueNode(value=str(value))
    return StringValueNode(value=str(value))
