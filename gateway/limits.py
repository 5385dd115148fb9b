"""Limits checked before execution: depth, aliases, ``first``, and an estimate of the DynamoDB requests to come.

The estimate walks the operation as the reader will execute it, with the same request builders (``plan``): a
root field of one entity is one batched point read that starts, at once, every collection and to-one field whose
keys the arguments give (a collection whose parent sorts at the head of its partition comes back with the parent
in one Query); a batch root field is one BatchGetItem per 100 distinct ids; a nested collection is one Query per
parent object; the targets of a many-to-many page are one BatchGetItem per 100 edges; a nested to-one field is one
BatchGetItem per 100 parent objects that arrive together. Relations are found by name: the model's
``Type.field`` collections and links, and fields whose type is an entity.

Calls and rounds are worst cases: every page full, every item present, no two requests merged beyond what the
reader always merges. A Query whose answer passes DynamoDB's 1 MB page size takes more calls than estimated. A
mutation field counts as one write, the fields after it a round later (mutations run one after another).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLIncludeDirective,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLSkipDirective,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    get_named_type,
    get_operation_ast,
    is_abstract_type,
)
from graphql.execution.values import VariableValues, get_argument_values, get_directive_values, get_variable_values

from gateway import plan
from gateway.config import Settings
from gateway.errors import BadUserInput, GatewayError
from gateway.lookahead import fragment_applies
from gateway.model import Collection, Entity, Model
from gateway.store import BATCH_GET_LIMIT, QueryRequest

_WRITE_NOTE = (
    "one conditional write (a transaction when counters move); an update by a partial key reads the item first, "
    "and a cascading delete takes a Query and a write per page of members"
)
MAX_VISITS = 10_000
"""Fields visited with fragments expanded; a document past this is refused however shallow it is."""
PREPARED_DOCUMENTS = 256
"""Documents kept parsed, with what validation and the estimate found, per application: most recent first."""
PREPARED_LENGTH = 16_384
"""Longer document texts are prepared for each request anew rather than kept."""


class CostLimit(GatewayError):
    code = "COST_LIMIT"


class InvalidVariables(Exception):
    """The variables do not fit the operation: a request error, reported before execution."""

    def __init__(self, errors: list[GraphQLError]) -> None:
        super().__init__("invalid variables")
        self.errors = errors


@dataclass(frozen=True)
class Budget:
    max_depth: int = 12
    max_aliases: int = 30
    max_tokens: int = 5000
    max_calls: int = 250
    max_rounds: int = 8
    default_page_size: int = 20
    max_page_size: int = 100
    introspection: str = "on"

    @classmethod
    def from_settings(cls, settings: Settings) -> Budget:
        return cls(
            max_depth=settings.max_depth,
            max_aliases=settings.max_aliases,
            max_tokens=settings.max_tokens,
            max_calls=settings.max_calls,
            max_rounds=settings.max_rounds,
            default_page_size=settings.default_page_size,
            max_page_size=settings.max_page_size,
            introspection=settings.introspection,
        )


@dataclass(frozen=True)
class Planned:
    """The requests one field will make: ``calls`` of ``operation`` in round ``round``, ``items`` read at most."""

    path: str
    operation: str
    calls: int
    round: int
    items: int
    request: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "operation": self.operation,
            "calls": self.calls,
            "round": self.round,
            "items": self.items,
            **self.request,
        }


@dataclass(frozen=True)
class Estimate:
    requests: tuple[Planned, ...]

    @property
    def calls(self) -> int:
        return sum(request.calls for request in self.requests)

    @property
    def rounds(self) -> int:
        return max((request.round for request in self.requests), default=0)

    @property
    def items(self) -> int:
        return sum(request.items for request in self.requests)

    def summary(self, budget: Budget) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "rounds": self.rounds,
            "items": self.items,
            "budget": {"calls": budget.max_calls, "rounds": budget.max_rounds},
            "withinBudget": self.calls <= budget.max_calls and self.rounds <= budget.max_rounds,
        }

    def explain(self, budget: Budget) -> dict[str, Any]:
        return {**self.summary(budget), "requests": [request.as_dict() for request in self.requests]}


@dataclass
class Prepared:
    """A document text parsed once, with what holds for it whatever the variables: the validation rule sets it
    passed, and the estimate of each of its operations that take no variables (by operation name)."""

    document: DocumentNode
    valid: set[tuple[type[ASTValidationRule], ...]]
    estimates: dict[str | None, Estimate]


class Planner:
    """The estimator for one GraphQL schema over one model, built once per application.

    It keeps the documents it has seen prepared (``prepared``), so a client that sends the same operation again
    does not pay for parsing, validation and planning again. The cache belongs to the planner, hence to one
    schema: a document valid here is never taken for valid under another schema.
    """

    def __init__(self, schema: GraphQLSchema, model: Model, budget: Budget) -> None:
        self.schema = schema
        self.model = model
        self.budget = budget
        self.entities = {entity.name: entity for entity in model.entities}
        self.collections = {collection.name: collection for collection in model.collections}
        self.links = {link.name: link.target for link in model.links}
        self._prepared: OrderedDict[str, Prepared] = OrderedDict()

    def prepared(self, query: str) -> Prepared | None:
        """The document ``query`` as an earlier request prepared it, while it is kept."""
        found = self._prepared.get(query)
        if found is not None:
            self._prepared.move_to_end(query)
        return found

    def prepare(self, query: str, document: DocumentNode) -> Prepared | None:
        """Keep ``document``, parsed from ``query``, for the requests that send the same text; None when the text
        is too long to keep."""
        if len(query) > PREPARED_LENGTH:
            return None
        prepared = self._prepared[query] = Prepared(document, set(), {})
        while len(self._prepared) > PREPARED_DOCUMENTS:
            self._prepared.popitem(last=False)
        return prepared

    def check(
        self,
        document: DocumentNode,
        operation_name: str | None,
        variables: Mapping[str, Any] | None,
        *,
        enforce: bool,
        prepared: Prepared | None = None,
    ) -> Estimate | None:
        """The estimate of the operation; raises CostLimit when it is refused.

        Raises InvalidVariables when the variables do not coerce; None when there is no such operation (execution
        reports that, before any resolver runs). With ``prepared`` (``document`` kept by ``prepare``), the
        estimate of an operation without variables is made once and reused.
        """
        operation = get_operation_ast(document, operation_name)
        if operation is None:
            return None
        estimate = prepared.estimates.get(operation_name) if prepared is not None else None
        if estimate is None:
            estimate = self._estimate(document, operation, variables)
            if estimate is None:
                return None
            if prepared is not None and not operation.variable_definitions:
                prepared.estimates[operation_name] = estimate
        if enforce:
            for name, value, maximum in (
                ("calls", estimate.calls, self.budget.max_calls),
                ("rounds", estimate.rounds, self.budget.max_rounds),
            ):
                if value > maximum:
                    raise CostLimit(
                        f"the operation is estimated at {value} DynamoDB {name}, over the budget of {maximum}",
                        limit=name,
                        estimate=estimate.summary(self.budget),
                    )
        return estimate

    def _estimate(
        self, document: DocumentNode, operation: OperationDefinitionNode, variables: Mapping[str, Any] | None
    ) -> Estimate | None:
        fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
        _Shape(self.budget, fragments).measure(operation.selection_set, 0, frozenset())
        coerced = get_variable_values(self.schema, operation.variable_definitions or (), dict(variables or {}))
        if not isinstance(coerced, VariableValues):
            raise InvalidVariables(coerced)
        root = self.schema.get_root_type(operation.operation)
        if root is None:
            return None
        walk = _Walk(self, fragments, coerced)
        walk.root(root, operation.selection_set, serial=operation.operation == OperationType.MUTATION)
        return Estimate(tuple(walk.requests))


class _Shape:
    """Depth and aliases with fragments expanded, stopping at the first limit passed."""

    def __init__(self, budget: Budget, fragments: Mapping[str, FragmentDefinitionNode]) -> None:
        self._budget = budget
        self._fragments = fragments
        self._aliases = 0
        self._visits = 0

    def measure(self, selection_set: SelectionSetNode, depth: int, seen: frozenset[str]) -> None:
        for selection in selection_set.selections:
            self._visits += 1
            if self._visits > MAX_VISITS:
                raise CostLimit(f"the operation has more than {MAX_VISITS} fields", limit="fields", maximum=MAX_VISITS)
            if isinstance(selection, FieldNode):
                if selection.alias is not None:
                    self._aliases += 1
                    if self._aliases > self._budget.max_aliases:
                        raise CostLimit(
                            f"the operation uses more than {self._budget.max_aliases} aliases",
                            limit="aliases",
                            maximum=self._budget.max_aliases,
                        )
                if selection.name.value.startswith("__"):
                    # Introspection reads the schema, never DynamoDB, and its standard query nests deep (ofType);
                    # the token limit still bounds its size.
                    continue
                if depth + 1 > self._budget.max_depth:
                    raise CostLimit(
                        f"the operation nests fields deeper than {self._budget.max_depth}",
                        limit="depth",
                        maximum=self._budget.max_depth,
                    )
                if selection.selection_set is not None:
                    self.measure(selection.selection_set, depth + 1, seen)
            elif isinstance(selection, InlineFragmentNode):
                self.measure(selection.selection_set, depth, seen)
            elif isinstance(selection, FragmentSpreadNode):
                fragment = self._fragments.get(selection.name.value)
                if fragment is not None and fragment.name.value not in seen:
                    self.measure(fragment.selection_set, depth, seen | {fragment.name.value})


@dataclass(frozen=True)
class _At:
    """Where objects of one field are: ``each`` objects in each of ``groups`` answers of round ``round``."""

    groups: int
    each: int
    round: int


@dataclass(frozen=True)
class _Field:
    key: str
    nodes: tuple[FieldNode, ...]
    definition: GraphQLField
    args: dict[str, Any]

    @property
    def name(self) -> str:
        return self.nodes[0].name.value

    @property
    def named(self) -> GraphQLNamedType:
        return get_named_type(self.definition.type)

    @property
    def is_list(self) -> bool:
        return _is_list(self.definition.type)

    @property
    def selection_sets(self) -> list[SelectionSetNode]:
        return [node.selection_set for node in self.nodes if node.selection_set is not None]


class _Walk:
    def __init__(
        self, planner: Planner, fragments: Mapping[str, FragmentDefinitionNode], variables: VariableValues
    ) -> None:
        self._planner = planner
        self._model = planner.model
        self._budget = planner.budget
        self._fragments = fragments
        self._variables = variables
        self.requests: list[Planned] = []

    # --- the root -------------------------------------------------------------------------------------------

    def root(self, root: GraphQLObjectType, selection_set: SelectionSetNode, *, serial: bool) -> None:
        # Mutation fields run one after another, so each starts a round later than the one before.
        start = 0
        for field in self._fields(root, [selection_set]):
            before = len(self.requests)
            entity = self._entity(field.named)
            if serial:
                self._add(field.key, "write", 1, start + 1, 1, {"note": _WRITE_NOTE})
                self._object(field, _At(1, 1, start + 1), field.key)
            elif entity is not None and field.is_list:
                self._batch(field, entity, start)
            elif entity is not None:
                self._fetch(field, entity, start)
            else:
                self._field(root, field, _At(1, 1, start), "")
            if serial:
                start = max((request.round for request in self.requests[before:]), default=start)

    def _batch(self, field: _Field, entity: Entity, start: int) -> None:
        keys = self._list_size(field)
        self._add(field.key, "BatchGetItem", math.ceil(keys / BATCH_GET_LIMIT), start + 1, keys, self._keys(entity))
        self._object(field, _At(1, keys, start + 1), field.key)

    def _fetch(self, field: _Field, entity: Entity, start: int) -> None:
        """A root field of one item: the reader's look-ahead starts what the arguments' ids allow at once."""
        assert isinstance(field.named, GraphQLObjectType)
        known = set(entity.id_fields)
        combined: tuple[_Field, Collection, int] | None = None
        pages: list[tuple[_Field, Collection, int]] = []
        linked: list[tuple[_Field, Entity]] = []
        rest: list[_Field] = []
        for child in self._fields(field.named, field.selection_sets):
            collection = self._collection(field.named, child)
            target = self._target(field.named, child)
            if collection is not None and set(collection.member.keys[collection.index].pk.fields) <= known:
                size, after = self._page_args(child)
                if combined is None and after is None and self._model.parent_sorts_with_members(collection):
                    combined = child, collection, size
                else:
                    pages.append((child, collection, size))
            elif target is not None and not child.is_list and set(target.id_fields) <= known:
                linked.append((child, target))
            else:
                rest.append(child)
        first = start + 1
        if combined is not None:
            child, collection, size = combined
            query = plan.parent_and_members_query(self._model, collection, _placeholders(entity), size)
            self._add(field.key, "Query", 1, first, query.limit, _query(query))
        read = [target for _, target in linked] + ([] if combined else [entity])
        if read:
            self._add(field.key, "BatchGetItem", 1, first, len(read), self._keys(*read))
        for child, collection, size in pages:
            query = plan.members_query(self._model, collection, _placeholders(entity), size)
            self._add(_join(field.key, child.key), "Query", 1, first, query.limit, _query(query))
        for child, collection, size in [*([combined] if combined else []), *pages]:
            self._connection(child, collection, _At(1, size, first), _join(field.key, child.key))
        for child, _ in linked:
            self._object(child, _At(1, 1, first), _join(field.key, child.key))
        for child in rest:
            self._field(field.named, child, _At(1, 1, first), field.key)

    # --- nested fields --------------------------------------------------------------------------------------

    def _field(self, parent: GraphQLObjectType, field: _Field, at: _At, path: str) -> None:
        path = _join(path, field.key)
        collection = self._collection(parent, field)
        if collection is not None:
            self._page(field, collection, at, path)
            return
        target = self._target(parent, field)
        if target is not None:
            keys = at.each * (self._list_size(field) if field.is_list else 1)
            calls = at.groups * math.ceil(keys / BATCH_GET_LIMIT)
            self._add(path, "BatchGetItem", calls, at.round + 1, at.groups * keys, self._keys(target))
            self._object(field, _At(at.groups, keys, at.round + 1), path)
            return
        each = at.each * (self._budget.max_page_size if field.is_list else 1)
        self._object(field, _At(at.groups, each, at.round), path)

    def _page(self, field: _Field, collection: Collection, at: _At, path: str) -> None:
        size, _ = self._page_args(field)
        query = plan.members_query(self._model, collection, _placeholders(collection.parent), size)
        calls = at.groups * at.each
        self._add(path, "Query", calls, at.round + 1, calls * query.limit, _query(query))
        self._connection(field, collection, _At(calls, size, at.round + 1), path)

    def _connection(self, field: _Field, collection: Collection, page: _At, path: str) -> None:
        """Inside a page: members come with it; the targets of edges are read in the round after it."""
        targets: list[tuple[_Field, str]] = []

        def walk(owner: _Field, owner_path: str) -> None:
            for parent in self._object_types(owner.named):
                for child in self._fields(parent, owner.selection_sets):
                    entity = self._entity(child.named)
                    child_path = _join(owner_path, child.key)
                    if entity is not None and collection.target is not None and entity.name == collection.target.name:
                        targets.append((child, child_path))
                    elif entity is not None and entity.name == collection.member.name:
                        self._object(child, page, child_path)
                    elif entity is not None:
                        self._field(parent, child, page, owner_path)
                    else:
                        walk(child, child_path)

        walk(field, path)
        if targets and collection.target is not None:
            calls = page.groups * math.ceil(page.each / BATCH_GET_LIMIT)
            self._add(
                targets[0][1],
                "BatchGetItem",
                calls,
                page.round + 1,
                page.groups * page.each,
                self._keys(collection.target),
            )
            for child, child_path in targets:
                self._object(child, _At(page.groups, page.each, page.round + 1), child_path)

    def _object(self, field: _Field, at: _At, path: str) -> None:
        for parent in self._object_types(field.named):
            for child in self._fields(parent, field.selection_sets):
                self._field(parent, child, at, path)

    # --- helpers --------------------------------------------------------------------------------------------

    def _add(self, path: str, operation: str, calls: int, round: int, items: int, request: Mapping[str, Any]) -> None:
        if calls:
            self.requests.append(Planned(path, operation, calls, round, items, request))

    def _fields(self, parent: GraphQLObjectType, selection_sets: Sequence[SelectionSetNode]) -> list[_Field]:
        """The child fields of ``parent`` selected in ``selection_sets``, merged by response key, as executed."""
        grouped: dict[str, list[FieldNode]] = {}
        for selection_set in selection_sets:
            for node in self._field_nodes(parent, selection_set, frozenset()):
                grouped.setdefault((node.alias or node.name).value, []).append(node)
        fields = []
        for key, nodes in grouped.items():
            definition = parent.fields.get(nodes[0].name.value)
            if definition is None:  # __typename and introspection: no DynamoDB request
                continue
            try:
                args = get_argument_values(definition, nodes[0], self._variables)
            except GraphQLError:
                args = {}
            fields.append(_Field(key, tuple(nodes), definition, args))
        return fields

    def _field_nodes(
        self, parent: GraphQLObjectType, selection_set: SelectionSetNode, seen: frozenset[str]
    ) -> list[FieldNode]:
        nodes: list[FieldNode] = []
        for selection in selection_set.selections:
            if not self._included(selection):
                continue
            if isinstance(selection, FieldNode):
                nodes.append(selection)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition.name.value if selection.type_condition else None
                if fragment_applies(self._planner.schema, condition, parent):
                    nodes += self._field_nodes(parent, selection.selection_set, seen)
            elif isinstance(selection, FragmentSpreadNode):
                fragment = self._fragments.get(selection.name.value)
                if fragment is None or fragment.name.value in seen:
                    continue
                if fragment_applies(self._planner.schema, fragment.type_condition.name.value, parent):
                    nodes += self._field_nodes(parent, fragment.selection_set, seen | {fragment.name.value})
        return nodes

    def _included(self, node: FieldNode | InlineFragmentNode | FragmentSpreadNode | Any) -> bool:
        skip = get_directive_values(GraphQLSkipDirective, node, self._variables)
        if skip and skip.get("if") is True:
            return False
        include = get_directive_values(GraphQLIncludeDirective, node, self._variables)
        return not (include and include.get("if") is False)

    def _object_types(self, named: GraphQLNamedType) -> Sequence[GraphQLObjectType]:
        if isinstance(named, GraphQLObjectType):
            return [named]
        if is_abstract_type(named):
            return self._planner.schema.get_possible_types(named)
        return []

    def _entity(self, named: GraphQLNamedType) -> Entity | None:
        return self._planner.entities.get(named.name) if isinstance(named, GraphQLObjectType) else None

    def _collection(self, parent: GraphQLObjectType, field: _Field) -> Collection | None:
        return self._planner.collections.get(f"{parent.name}.{field.name}")

    def _target(self, parent: GraphQLObjectType, field: _Field) -> Entity | None:
        return self._planner.links.get(f"{parent.name}.{field.name}") or self._entity(field.named)

    def _page_args(self, field: _Field) -> tuple[int, str | None]:
        first, after = field.args.get("first"), field.args.get("after")
        try:
            size = plan.page_size(first, self._budget.default_page_size, self._budget.max_page_size)
        except BadUserInput:
            # The field itself refuses it, at its path and before reading; counted as the largest page.
            size = self._budget.max_page_size
        return size, after

    def _list_size(self, field: _Field) -> int:
        """How many items a list field reads: the distinct values of its list argument, or a page at most."""
        for value in field.args.values():
            if isinstance(value, list):
                return len({str(one) for one in value})
        return self._budget.max_page_size

    def _keys(self, *entities: Entity) -> dict[str, Any]:
        return {"keys": [self._model.key(entity, _placeholders(entity)) for entity in entities]}


def _placeholders(entity: Entity) -> dict[str, str]:
    """Ids that format into the key templates themselves: the plan shows ``WS#{workspaceId}``."""
    return {name: "{" + name + "}" for name in entity.all_id_fields}


def _query(request: QueryRequest) -> dict[str, Any]:
    pk_name, pk_value = request.partition
    condition = f"{pk_name} = {pk_value}"
    if request.sort is not None:
        sk_name, operator, sk_value = request.sort
        if operator == "begins_with":
            sort = f"begins_with({sk_name}, {sk_value})"
        elif operator == "between":
            sort = f"{sk_name} BETWEEN {sk_value} AND {request.sort_end}"
        else:
            sort = f"{sk_name} {operator} {sk_value}"
        condition += f" AND {sort}"
    return {
        "index": request.index or "table",
        "keyCondition": condition,
        "scanIndexForward": request.ascending,
        "limit": request.limit,
    }


def _is_list(type_: GraphQLOutputType) -> bool:
    if isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
