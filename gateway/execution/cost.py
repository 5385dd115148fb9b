"""Limits checked before execution: depth, aliases, ``first``, and an estimate of the DynamoDB requests to come.

The estimate is the walk that executes the operation (``execution.walk``), run over a worst-case stand-in for the
table: every page full, every item present, no two ids alike. Calls and rounds are therefore upper bounds of what
the operation sends, reached when the data is that large. A Query whose answer passes DynamoDB's 1 MB page size
takes more calls than estimated. A mutation field counts as one write, the reads of its result a round later
(mutations run one after another). An estimate stops once it passes the call budget.

The estimate that limits an operation assumes every key the caller's: it is made once per document and shared by
all callers. An operation with variables is estimated once with each variable at its worst case
(``execution.bound``): when that bound is within the budget, so is every request's estimate, and none is made;
only when it is not (or the operation has no bound) is a request estimated with its own variables.

Explain plans with the caller's guard: what the guard refuses is reported FORBIDDEN at its field and planned no
further, as execution would answer it, and such a plan is made for its request alone; only explain describes the
requests it plans.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import OrderedDict
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from graphql import (
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    get_operation_ast,
)
from graphql.execution.values import VariableValues

from gateway.config import Settings
from gateway.design.keys import Ids
from gateway.design.model import Collection, Entity, Item, Lookup, Model
from gateway.errors import CostLimit, Forbidden
from gateway.execution import queries
from gateway.execution.bound import worst_case
from gateway.execution.guard import Guard
from gateway.execution.selection import Field, Scope, Selections, children, fields, object_types
from gateway.execution.variables import coerce_variables
from gateway.execution.walk import ItemKey, Planned, TooLarge, Walk, beside, description, placeholders_of

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

_Done = TypeVar("_Done")


class InvalidVariables(Exception):
    """The variables do not fit the operation: a request error, reported before execution."""

    def __init__(self, errors: list[GraphQLError]) -> None:
        super().__init__("invalid variables")
        self.errors = errors


@dataclass(frozen=True)
class Budget:
    """The limits an operation is checked against: the served settings' own, defaults included."""

    max_depth: int = Settings.max_depth
    max_aliases: int = Settings.max_aliases
    max_tokens: int = Settings.max_tokens
    max_calls: int = Settings.max_calls
    max_rounds: int = Settings.max_rounds
    max_objects: int = Settings.max_objects
    default_page_size: int = Settings.default_page_size
    max_page_size: int = Settings.max_page_size
    filter_read_calls: int = Settings.filter_read_calls
    introspection: str = Settings.introspection

    @classmethod
    def from_settings(cls, settings: Settings) -> Budget:
        return cls(**{one.name: getattr(settings, one.name) for one in dataclasses.fields(cls)})


@dataclass(frozen=True)
class Estimate:
    requests: tuple[Planned, ...]
    forbidden: tuple[tuple[str, Forbidden], ...] = ()
    """Fields the caller's guard refused, by path, with the error execution would answer (explain only)."""

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


SHARED_SELECTIONS = 16
"""Sets of variable values whose selections a kept document keeps, all its operations together."""
SHARED_VARIABLES_BYTES = 1024
"""The largest variables (as JSON) whose selections are kept: larger ones (a list of many ids) would make the kept
documents hold what requests sent, and their selections are read per request as before."""


@dataclass
class Prepared:
    """A document text parsed once, with what holds for it whatever the variables: the validation rule sets it
    passed, the estimate of each of its operations that take no variables and the bound of each that takes some
    (None: it has none), the selections as the walk reads them (by operation name) and the compiled plans."""

    document: DocumentNode
    valid: set[tuple[type[ASTValidationRule], ...]]
    estimates: dict[str | None, Estimate]
    bounds: dict[str | None, Estimate | None] = dataclasses.field(default_factory=dict)
    selections: dict[tuple[str | None, bytes], Selections] = dataclasses.field(default_factory=dict)
    plans: dict[int, Any] = dataclasses.field(default_factory=dict)
    """What the compiled executor (``surface.compiled``) made of each operation, by the operation's node: opaque
    here, and kept exactly as long as the document."""

    def selections_of(self, operation_name: str | None, variables: Mapping[str, Any] | None = None) -> Selections:
        """The memo of the operation's selections (``Scope.selections``), shared by its requests that send the same
        variables: the fields read depend on them (their arguments, ``@include``/``@skip``). The last
        ``SHARED_SELECTIONS`` sets of variables of the document are kept; variables that are not JSON (they come
        as JSON) or longer than ``SHARED_VARIABLES_BYTES`` get a memo of their own."""
        try:
            given = orjson.dumps(variables or {}, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            return {}
        if len(given) > SHARED_VARIABLES_BYTES:
            return {}
        key = (operation_name, given)
        found = self.selections.pop(key, None)
        if found is None:
            found = {}
            if len(self.selections) >= SHARED_SELECTIONS:
                del self.selections[next(iter(self.selections))]
        self.selections[key] = found  # the most recently used last
        return found


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
        self._lookups = {lookup.name: lookup for lookup in model.lookups}
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
        guard: Guard | None = None,
        coerced: VariableValues | None = None,
    ) -> Estimate | None:
        """The estimate of the operation; raises CostLimit when it is refused.

        Raises InvalidVariables when the variables do not coerce; None when there is no such operation (execution
        reports that, before any resolver runs). With ``prepared`` (``document`` kept by ``prepare``), the
        estimate of an operation without variables is made once and reused. With ``guard`` (a caller's, to
        explain), what it refuses is left out and listed in ``forbidden``; such an estimate is neither taken from
        ``prepared`` nor kept there, since it holds for that caller only.
        """
        operation = get_operation_ast(document, operation_name)
        if operation is None:
            return None
        shared = prepared if guard is None else None
        estimate = shared.estimates.get(operation_name) if shared is not None else None
        if estimate is None and shared is not None and operation.variable_definitions:
            estimate = self._bounded(shared, document, operation, operation_name, variables, coerced)
        if estimate is None:
            estimate = self.estimate(document, operation, variables, guard, coerced)
            if estimate is None:
                return None
            if shared is not None and not operation.variable_definitions:
                shared.estimates[operation_name] = estimate
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

    def _bounded(
        self,
        prepared: Prepared,
        document: DocumentNode,
        operation: OperationDefinitionNode,
        operation_name: str | None,
        variables: Mapping[str, Any] | None,
        coerced: VariableValues | None,
    ) -> Estimate | None:
        """The operation's bound, made once per document, when it is within the budget (the variables checked);
        None when a request must be estimated with its own variables."""
        if operation_name not in prepared.bounds:
            prepared.bounds[operation_name] = self._bound(document, operation)
        bound = prepared.bounds[operation_name]
        if bound is None or bound.calls > self.budget.max_calls or bound.rounds > self.budget.max_rounds:
            return None
        if coerced is None:
            self.coerce(operation, variables)
        return bound

    def _bound(self, document: DocumentNode, operation: OperationDefinitionNode) -> Estimate | None:
        worst = worst_case(self.model, self.budget.max_page_size, operation, _fragments(document))
        if worst is None:
            return None
        try:
            return self.estimate(document, operation, worst, None)
        except (CostLimit, InvalidVariables):
            return None  # a request with its own variables may pass, or fail for its own reason

    def estimate(
        self,
        document: DocumentNode,
        operation: OperationDefinitionNode,
        variables: Mapping[str, Any] | None,
        guard: Guard | None,
        coerced: VariableValues | None = None,
    ) -> Estimate | None:
        """The walk of ``operation`` over the worst-case stand-in, with these variables (``coerced``, when they
        already are); what ``check`` keeps."""
        fragments = _fragments(document)
        _Shape(self.budget, fragments).measure(operation.selection_set, 0, frozenset())
        if coerced is None:
            coerced = self.coerce(operation, variables)
        root = self.schema.get_root_type(operation.operation)
        if root is None:
            return None
        scope = Scope(self.schema, fragments, coerced, {})
        try:
            return self._walked(scope, root, operation, guard)
        except TooLarge as error:
            raise CostLimit(str(error), limit="objects", maximum=error.maximum) from None

    def coerce(self, operation: OperationDefinitionNode, variables: Mapping[str, Any] | None) -> VariableValues:
        """``variables`` coerced to ``operation``'s definitions, as graphql-core coerces them; InvalidVariables
        with its errors when they do not."""
        coerced = coerce_variables(self.schema, operation.variable_definitions or (), variables or {})
        if not isinstance(coerced, VariableValues):
            raise InvalidVariables(coerced)
        return coerced

    def _walked(
        self, scope: Scope, root: GraphQLObjectType, operation: OperationDefinitionNode, guard: Guard | None
    ) -> Estimate:
        forbidden: dict[str, Forbidden] = {}
        if operation.operation == OperationType.SUBSCRIPTION:
            # Each event is an object in hand, as a mutation's result is: what its selection reads is the cost.
            source = _WorstCase(self.model, guard, forbidden)
            walk = self._walk(scope, 1, source)
            for one in fields(scope, root, [operation.selection_set]):
                for node in children(scope, one):
                    if node.name != "node":
                        continue
                    for possible in object_types(scope, node.named):
                        entity = self.model.entity(possible.name)
                        if entity is not None and not entity.internal:
                            walk.known(entity, source.written(entity), node, f"{one.key}.{node.key}")
            _now(walk.run())
            return Estimate(tuple(walk.planned), tuple(forbidden.items()))
        if operation.operation != OperationType.MUTATION:
            return Estimate(tuple(self._read(scope, root, operation, guard, forbidden)), tuple(forbidden.items()))
        # Mutation fields run one after another: each writes a round after what came before, then reads.
        planned: list[Planned] = []
        start = 0
        for one in fields(scope, root, [operation.selection_set]):
            planned.append(Planned(one.key, "write", 1, start + 1, 1, {"note": _WRITE_NOTE}))
            source = _WorstCase(self.model, guard, forbidden)
            walk = self._walk(scope, start + 2, source)
            for possible in object_types(scope, one.named):
                entity = self.model.entity(possible.name)
                if entity is not None and not entity.internal:
                    walk.known(entity, source.written(entity), one, one.key)
            _now(walk.run())
            planned += walk.planned
            start = max((request.round for request in planned), default=start)
        return Estimate(tuple(planned), tuple(forbidden.items()))

    def _read(
        self,
        scope: Scope,
        root: GraphQLObjectType,
        operation: OperationDefinitionNode,
        guard: Guard | None,
        forbidden: dict[str, Forbidden],
    ) -> list[Planned]:
        """A query's requests: its root fields' reads walked together, and each lookup's Query and what it starts."""
        source = _WorstCase(self.model, guard, forbidden)
        walk = self._walk(scope, 1, source)
        walk.roots(root, [operation.selection_set])
        _now(walk.run())
        planned, objects = list(walk.planned), walk.objects
        for one in fields(scope, root, [operation.selection_set]):
            lookup = self._lookups.get(one.name)
            if lookup is not None:
                looked_up, objects = self._looked_up(scope, lookup, one, source, objects)
                planned += looked_up
        return planned

    def _looked_up(
        self, scope: Scope, lookup: Lookup, field: Field, source: _WorstCase, objects: int
    ) -> tuple[list[Planned], int]:
        """A lookup root field: its Query on the index in the first round (with the first page of a collection
        beside the entity when the selection asks for one, as the reader sends it), then what the entity found
        starts, from the second round; and the objects counted so far, with these."""
        entity = lookup.entity
        ids = source.written(entity)
        if not source.permits_item(entity, ids):
            source.refused(field.key)
            return [], objects
        budget = self.budget
        along = beside(
            self.model, lookup, children(scope, field, entity.name), budget.default_page_size, budget.max_page_size
        )
        walk = self._walk(scope, 2, source, objects + 1)
        shown = placeholders_of(entity)
        if along is None:
            request = queries.lookup_query(self.model, lookup, shown)
        else:
            collection, window = along
            request = queries.parent_and_members_query(self.model, collection, shown, window)
            walk.page_read((queries.binding(collection, ids), window), _now(source.page(collection, ids, window)))
        described = description(request) if source.explaining else {}
        planned = [Planned(field.key, "Query", 1, 1, request.limit, described)]
        walk.known(entity, ids, field, field.key)
        _now(walk.run())
        return planned + walk.planned, objects + 1 + walk.objects

    def _walk(self, scope: Scope, first_round: int, source: _WorstCase, objects: int = 0) -> Walk:
        return Walk(
            source,
            scope,
            # The requests are described for explain alone, which plans with the caller's guard.
            describe=source.explaining,
            default_page_size=self.budget.default_page_size,
            max_page_size=self.budget.max_page_size,
            filter_read_calls=self.budget.filter_read_calls,
            max_calls=self.budget.max_calls,
            max_objects=self.budget.max_objects - objects,
            first_round=first_round,
            refused=source.refused,
        )


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


_MADE_UP = "\x00"
"""What the ids the stand-in makes up start with: a control character, which no id from a request may hold."""


class _WorstCase:
    """A stand-in for the table that answers every read the worst way: each page full, each item present, no two
    ids alike. Its answers never wait, so a walk over it runs to the end without an event loop.

    With a caller's guard it refuses what the guard refuses, and records in ``forbidden`` the field and the error
    of each refusal. The worst case is then that what it makes up is the caller's: a tenant id it made up counts as
    one the caller holds (if the caller holds any), as the items execution reads either are or are hidden.
    """

    def __init__(self, model: Model, guard: Guard | None, forbidden: dict[str, Forbidden]) -> None:
        self.model = model
        self._guard = guard
        self.forbidden = forbidden
        self._refusal: Forbidden | None = None
        self._known: dict[ItemKey, Item] = {}
        # The ids each made-up item stands for: every id of its entity, those of any variant or sparse index
        # included, as the worst case has them all (an item holds one variant's keys only).
        self._ids: dict[ItemKey, dict[str, str]] = {}
        self._fresh = itertools.count()

    @property
    def explaining(self) -> bool:
        return self._guard is not None

    def cached(self, key: ItemKey) -> tuple[bool, Item | None]:
        return key in self._known, self._known.get(key)

    def permits_item(self, entity: Entity, ids: Ids) -> bool:
        if self._guard is None:
            return True
        try:
            self._guard.check_item(entity, self._as_callers(ids))
        except Forbidden as refusal:
            self._refusal = refusal
            return False
        return True

    def permits_query(self, collection: Collection, ids: Ids) -> bool:
        if self._guard is None:
            return True
        try:
            self._guard.check_query(collection, self._as_callers(ids))
        except Forbidden as refusal:
            self._refusal = refusal
            return False
        return True

    def visible(self, entity: Entity, item: Item) -> bool:
        if self._guard is None:
            return True
        ids = self.model.ids_of(entity, item)
        return ids is None or self._guard.visible(entity, self.model.item(entity, self._as_callers(ids), {}))

    def refused(self, path: str) -> None:
        """The walk's report of a refusal, made at ``path`` right after this stand-in refused."""
        if self._refusal is not None:
            self.forbidden.setdefault(path, self._refusal)

    def _as_callers(self, ids: Ids) -> Ids:
        """``ids`` with each tenant id the stand-in made up replaced by one the caller holds, when it holds one."""
        guard = self._guard
        if guard is None or not any(value.startswith(_MADE_UP) for value in ids.values()):
            return ids
        grants, held = guard.tenancy.grants, guard.principal.grants
        return {
            name: min(held.get(grants[name], ()), default=value)
            if name in grants and value.startswith(_MADE_UP)
            else value
            for name, value in ids.items()
        }

    async def read(self, keys: list[tuple[ItemKey, Entity, Ids]]) -> None:
        for _, entity, ids in keys:
            self._item(entity, ids)

    async def page(self, collection: Collection, parent_ids: Ids, window: queries.Window) -> _Page:
        """A full page. Of a union, a full page of each kind: which kinds a page holds is the data's, and what
        each kind's nodes select may start reads of their own, so the worst case is every kind filling it."""
        parent_ids = collection.member_ids(parent_ids)
        members = []
        for entity, shape in zip(collection.members, collection.shapes, strict=True):
            for _ in range(window.size):
                ids = {
                    name: parent_ids[name] if name in shape.fields and name in parent_ids else self._new()
                    for name in entity.all_id_fields
                }
                members.append(_Member(ids, self._item(entity, ids), entity))
        return _Page(members)

    async def parent_and_page(self, entity: Entity, ids: Ids, collection: Collection, window: queries.Window) -> _Page:
        self._item(entity, ids)
        return await self.page(collection, ids, window)

    async def gather(self, work: list[Coroutine[Any, Any, None]]) -> None:
        try:
            for one in work:
                await one
        finally:
            for one in work:  # those a refusal left unstarted
                one.close()

    def _item(self, entity: Entity, ids: Ids) -> Item:
        full = {name: ids[name] if name in ids else self._new() for name in entity.all_id_fields}
        item = self.model.item(entity, full, {})
        key = self.model.item_key(item)
        self._known.setdefault(key, item)
        self._ids.setdefault(key, full)
        return item

    def ids_of(self, entity: Entity, item: Item) -> Ids | None:
        full = self._ids.get(self.model.item_key(item))
        return full if full is not None else self.model.ids_of(entity, item)

    def _new(self) -> str:
        return f"{_MADE_UP}{next(self._fresh)}"

    def written(self, entity: Entity) -> dict[str, str]:
        """The ids of an item a mutation wrote."""
        return {name: self._new() for name in entity.all_id_fields}


@dataclass(frozen=True)
class _Member:
    ids: dict[str, str]
    item: Item
    entity: Entity


@dataclass(frozen=True)
class _Page:
    members: list[_Member]


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}


def _now(work: Coroutine[Any, Any, _Done]) -> _Done:
    """Run a coroutine that never waits (a walk over the worst-case stand-in) to its end; what it returns."""
    try:
        work.send(None)
    except StopIteration as done:
        result: _Done = done.value
        return result
    work.close()
    raise RuntimeError("the estimate waited for something")
