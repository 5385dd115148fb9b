"""Compiled execution: what graphql-core works out anew for every request, kept once per operation of a document.

graphql-core's executor collects the fields of every selection set per request, computes every field's arguments
per object, builds a resolve info per field per object and completes each value by testing its type. Most of it
depends on the document alone. ``Plan`` keeps it: the fields collected per (selection set, runtime type), with
``@include``/``@skip`` folded in by the values of the variables they name; per field its definition, resolver,
the arguments when they are literal, for a leaf strawberry reads as a plain attribute (and ``__typename``) the
attribute and a completion that needs no resolve info, and for a resolver without arguments a direct call.
``CompiledExecutor`` runs the operation with the plan: objects go straight to their kept fields and lists
straight to their items' completion; abstract types, leaves with resolvers, errors and their propagation and
awaiting are graphql-core's own code, called as it calls it. The answer is graphql-core's answer, byte for byte;
``tests/e2e/test_compiled_execution.py`` compares the two.

Queries and subscription events are compiled; mutations, introspection and documents whose plan would depend on
more than ``MAX_FLAG_VARIABLES`` variables are interpreted by graphql-core as before.
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from inspect import isawaitable
from typing import Any, TypeVar

from graphql import (
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLID,
    GraphQLLeafType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    GraphQLString,
    InlineFragmentNode,
    ListValueNode,
    ObjectValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionNode,
    SelectionSetNode,
    ValueNode,
    VariableNode,
    get_nullable_type,
    is_leaf_type,
    is_non_null_type,
)
from graphql.execution import Executor, ExperimentalIncrementalExecutionResults
from graphql.execution.collect_fields import CollectedFields, FieldDetailsList, GroupedFieldSet
from graphql.execution.values import get_argument_values
from graphql.pyutils import AwaitableOrValue, Path, Undefined, UndefinedType, gather_with_cancel
from graphql.type.introspection import TypeNameMetaFieldDef
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

from gateway.surface.context import Context
from gateway.surface.toolkit import ARGUMENTS_FROM_THE_OPERATION, HELD_IN, reads_attribute

MAX_FLAG_VARIABLES = 4
"""Variables that ``@include``/``@skip`` may name in a compiled document: a plan keeps one collection of fields
per combination of their values, so at most 16."""

_Flags = tuple[Any, ...]
_Resolve = Callable[..., Any]
_Completed = TypeVar("_Completed", dict[str, Any], list[Any])

_NO_INFO: Any = None
"""The resolve info given to an ``is_type_of`` that reads none (``_tells_without_info``)."""

STRAWBERRY_DEFINITION = GraphQLCoreConverter.DEFINITION_BACKREF
"""Where strawberry keeps, on a graphql-core field, the strawberry field it was made from."""


@dataclass(frozen=True, slots=True)
class _Field:
    """One field of one selection set on one object type, as the plan runs it."""

    definition: GraphQLField
    nodes: list[FieldNode]
    resolve: _Resolve
    arguments: dict[str, Any] | None
    """Computed once when the field's arguments are literal; None: computed per request from its variables."""
    leaf: GraphQLLeafType | None
    """Set when ``resolve`` reads an attribute (or is ``__typename``) and the field is a leaf: completed here."""
    null: str
    """The message when a non-null leaf field resolves to null (empty for a nullable field)."""
    attribute: str | None
    """The attribute strawberry's resolver would read (``getattr`` with no resolver of its own): read directly, by
    ``plain``, for any field (a leaf, a page's ``edges``, its ``pageInfo``)."""
    text: bool
    """A ``String`` or ``ID`` leaf: a ``str`` completes to itself, as graphql-core's coercion returns it."""
    call: _Resolve | None
    """For a field whose resolver takes no arguments, or reads them from the operation: the resolver called as
    strawberry calls it, without its per-call wrapping (argument conversion, extension chain); None where that
    wrapping could do anything."""
    object: GraphQLObjectType | None
    """For a field without arguments whose type is an object type, or a list of one, read without resolve info
    (``plain``), and whose objects are told without one: that object type. Its objects go straight to their
    fields."""
    item: GraphQLOutputType | None
    """For such a list: the type of its items (non-null or not); None for a single object."""
    plain: Callable[[Any], Any] | None
    """The field's value read from the source alone: its attribute, or a resolver that takes neither arguments nor
    info and is no coroutine function, for a leaf or an ``object`` field; None for any other."""

    def read(self, source: Any) -> Any:
        """The field's value on ``source``, for a leaf completed here: no resolve info is needed."""
        plain = self.plain
        return plain(source) if plain is not None else self.resolve(source, None)

    def complete(self, result: Any) -> Any:
        """graphql-core's ``complete_value`` for this leaf field: the same checks, in the same order."""
        if self.text and type(result) is str:  # neither an exception nor null, and coerced to itself
            return result
        if isinstance(result, Exception):
            raise result
        if result is None or result is Undefined:
            if self.null:
                raise TypeError(self.null)
            return None
        assert self.leaf is not None
        return Executor.complete_leaf_value(self.leaf, result)


class Plan:
    """What one operation of a kept document compiles to, filled as its requests first meet each part of it.

    Shared by every request that sends the document (``execution.cost.Prepared.plans``), hence bounded with it.
    The collections are kept with the field lists they hold, so the lists' identities, by which fields are found
    again, stay theirs for as long as the plan lives.
    """

    def __init__(self, operation: OperationDefinitionNode, fragments: dict[str, FragmentDefinitionNode]) -> None:
        selections = list(_selections(operation.selection_set, fragments, set()))
        flags = sorted(_flag_variables(selections))
        self.compiled = (
            operation.operation in (OperationType.QUERY, OperationType.SUBSCRIPTION)
            and len(flags) <= MAX_FLAG_VARIABLES
            and not _introspects(selections)
            and not _incremental(selections)
        )
        """False: graphql-core interprets the operation, as without a plan."""
        self.flag_names = tuple(flags)
        self.roots: dict[_Flags, GroupedFieldSet] = {}
        self.subfields: dict[tuple[_Flags, str, int], tuple[FieldDetailsList, CollectedFields]] = {}
        self.fields: dict[tuple[str, int], _Field | None] = {}
        self.sets: dict[tuple[str, int], list[tuple[str, FieldDetailsList, _Field | None]]] = {}

    def grouped(
        self, executor: CompiledExecutor, parent_type: GraphQLObjectType, grouped_field_set: GroupedFieldSet
    ) -> list[tuple[str, FieldDetailsList, _Field | None]]:
        """The fields of a collected selection set, compiled, in order; kept by the set's identity."""
        key = (parent_type.name, id(grouped_field_set))
        found = self.sets.get(key)
        if found is None:
            found = self.sets[key] = [
                (name, details, self.field(executor, parent_type, details))
                for name, details in grouped_field_set.items()
            ]
        return found

    def field(
        self, executor: CompiledExecutor, parent_type: GraphQLObjectType, field_details_list: FieldDetailsList
    ) -> _Field | None:
        key = (parent_type.name, id(field_details_list))
        if key not in self.fields:
            self.fields[key] = _compile(executor, parent_type, field_details_list)
        return self.fields[key]


def _compile(
    executor: CompiledExecutor, parent_type: GraphQLObjectType, field_details_list: FieldDetailsList
) -> _Field | None:
    first = field_details_list[0]
    node = first.node
    definition = executor.schema.get_field(parent_type, node.name.value)
    if definition is None:
        return None
    literal = first.fragment_variable_values is None and all(_literal(one.value) for one in node.arguments or ())
    arguments = None
    if literal:
        try:
            arguments = get_argument_values(definition, node, executor.variable_values) if definition.args else {}
        except Exception:  # raised again per request, where graphql-core reports it at its field
            arguments = None
    resolve = definition.resolve or executor.field_resolver
    nullable = get_nullable_type(definition.type)
    leaf = None
    plain = None
    if is_leaf_type(nullable):
        if definition is TypeNameMetaFieldDef:
            name = parent_type.name
            resolve = lambda _source, _info: name  # noqa: E731  # the type's name, known when compiled
            leaf = nullable
        elif reads_attribute(resolve):
            leaf = nullable
        else:
            plain = _root_call(definition, resolve)
            leaf = nullable if plain is not None else None
    null = ""
    if is_non_null_type(definition.type):
        null = f"Cannot return null for non-nullable field {parent_type}.{node.name.value}."
    attribute = _attribute(definition, resolve)
    if attribute is not None:
        plain = operator.attrgetter(attribute)
    text = leaf is not None and leaf.name in _TEXT and leaf.coerce_output_value is _TEXT[leaf.name]
    nodes = [one.node for one in field_details_list]
    call = _plain_call(definition, resolve) if leaf is None else None
    item = nullable.of_type if isinstance(nullable, GraphQLList) else None
    target = get_nullable_type(item) if item is not None else nullable
    object_ = None
    if leaf is None and not definition.args and isinstance(target, GraphQLObjectType) and _tells_without_info(target):
        plain = plain or _root_call(definition, resolve) or _held_call(definition, resolve)
        object_ = target if plain is not None else None
    return _Field(definition, nodes, resolve, arguments, leaf, null, attribute, text, call, object_, item, plain)


def _tells_without_info(object_type: GraphQLObjectType) -> bool:
    """Whether the type's ``is_type_of`` is absent or strawberry's own test of an object's class, which reads no
    resolve info; a type's own ``is_type_of`` might."""
    is_type_of = object_type.is_type_of
    return is_type_of is None or getattr(is_type_of, "__qualname__", "").endswith("_get_is_type_of.<locals>.is_type_of")


_TEXT = {"String": GraphQLString.coerce_output_value, "ID": GraphQLID.coerce_output_value}
"""The leaf types whose coercion returns a ``str`` as it is (graphql-core's own, not a scalar of the same name)."""


def _attribute(definition: GraphQLField, resolve: _Resolve) -> str | None:
    """The attribute name strawberry's resolver for a field without resolver reads with ``getattr``, or None
    where it would do anything else (a resolver of its own, another default resolver)."""
    if not reads_attribute(resolve):
        return None
    field = (definition.extensions or {}).get(STRAWBERRY_DEFINITION)
    if field is None or field.base_resolver is not None or field.default_resolver is not getattr:
        return None
    name = field.python_name
    return name if isinstance(name, str) else None


def _plain_call(definition: GraphQLField, resolve: _Resolve) -> _Resolve | None:
    """strawberry's resolver of a field without field extensions or exception handlers, and without arguments or
    marked as reading them from the operation (``reads_arguments_from_the_operation``: a nested connection), as a
    call of its function with what strawberry's ``get_arguments`` would pass it: the source as ``root`` and
    strawberry's info.

    strawberry's wrapper (``_resolver``/``_async_resolver``) then converts arguments nobody reads, runs no
    extension and handles no exception; what it still does, building its info and calling through two layers, is
    done here in one. Anything else (``self`` or ``parent`` parameters, a wrapper of another shape) keeps
    strawberry's call.
    """
    field = (definition.extensions or {}).get(STRAWBERRY_DEFINITION)
    if field is None or field.extensions:
        return None
    resolver = field.base_resolver
    if resolver is None or resolver.self_parameter is not None or resolver.parent_parameter is not None:
        return None
    function = resolver.wrapped_func
    if (definition.args or field.arguments) and not getattr(function, ARGUMENTS_FROM_THE_OPERATION, False):
        return None
    if getattr(resolve, "__name__", "") not in ("_resolver", "_async_resolver"):
        return None
    if _free(resolve, "field_exception_handlers") != ():
        return None
    make_info = _free(resolve, "_strawberry_info_from_graphql")
    if not callable(make_info):
        return None
    root = resolver.root_parameter.name if resolver.root_parameter is not None else None
    info_name = resolver.info_parameter.name if resolver.info_parameter is not None else None

    def call(source: Any, info: GraphQLResolveInfo[Any]) -> Any:
        passed: dict[str, Any] = {}
        if root is not None:
            passed[root] = source
        if info_name is not None:
            passed[info_name] = make_info(info)
        return function(**passed)

    return call


def _root_call(definition: GraphQLField, resolve: _Resolve) -> Callable[[Any], Any] | None:
    """A field's resolver that ``_plain_call`` would call and that takes no arguments and no info and is no
    coroutine function, as its function called with the source alone; None otherwise."""
    if definition.args or _plain_call(definition, resolve) is None:
        return None
    resolver = definition.extensions[STRAWBERRY_DEFINITION].base_resolver
    if resolver.info_parameter is not None or resolver.is_async:
        return None
    function = resolver.wrapped_func
    if resolver.root_parameter is None:
        return lambda _source: function()
    root = resolver.root_parameter.name
    return lambda source: function(**{root: source})


_HELD_ELSEWHERE: Any = object()
"""What a ``_held_call`` returns where the root holds a placeholder: the field's resolver is called then."""


def _held_call(definition: GraphQLField, resolve: _Resolve) -> Callable[[Any], Any] | None:
    """For a resolver marked ``returns_what_the_root_holds`` that ``_plain_call`` would call: what the root holds,
    read directly, or ``_HELD_ELSEWHERE`` for a placeholder; None for any other resolver."""
    if _plain_call(definition, resolve) is None:
        return None
    held = getattr(definition.extensions[STRAWBERRY_DEFINITION].base_resolver.wrapped_func, HELD_IN, None)
    if held is None:
        return None
    attribute, placeholder = held

    def read(source: Any) -> Any:
        value = getattr(source, attribute)
        return _HELD_ELSEWHERE if isinstance(value, placeholder) else value

    return read


def _free(function: Any, name: str) -> Any:
    """The value of the free variable ``name`` of a closure, or None: how strawberry's per-field wrapper keeps
    what it was built with (it exposes it no other way)."""
    code = getattr(function, "__code__", None)
    closure = getattr(function, "__closure__", None)
    if code is None or closure is None or name not in code.co_freevars:
        return None
    return closure[code.co_freevars.index(name)].cell_contents


def _literal(value: ValueNode) -> bool:
    if isinstance(value, VariableNode):
        return False
    if isinstance(value, ListValueNode):
        return all(_literal(one) for one in value.values)
    if isinstance(value, ObjectValueNode):
        return all(_literal(one.value) for one in value.fields)
    return True


def _selections(
    selection_set: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode], seen: set[str]
) -> Iterable[SelectionNode]:
    """Every selection under ``selection_set``, fragments entered once each."""
    for selection in selection_set.selections:
        yield selection
        if isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            if name in fragments and name not in seen:
                seen.add(name)
                yield from _selections(fragments[name].selection_set, fragments, seen)
        elif isinstance(selection, FieldNode | InlineFragmentNode) and selection.selection_set is not None:
            yield from _selections(selection.selection_set, fragments, seen)


def _flag_variables(selections: Sequence[SelectionNode]) -> set[str]:
    """The variables ``@include``/``@skip`` name: which fields are collected depends on their values."""
    names = set()
    for selection in selections:
        for directive in selection.directives or ():
            for argument in directive.arguments or ():
                if isinstance(argument.value, VariableNode):
                    names.add(argument.value.name.value)
    return names


def _introspects(selections: Sequence[SelectionNode]) -> bool:
    return any(isinstance(one, FieldNode) and one.name.value in ("__schema", "__type") for one in selections)


def _incremental(selections: Sequence[SelectionNode]) -> bool:
    """``@defer`` or ``@stream``: their field sets are planned per request, so they have no identity to key on."""
    return any(directive.name.value in ("defer", "stream") for one in selections for directive in one.directives or ())


_SHARED = (
    "schema",
    "fragment_definitions",
    "fragments",
    "operation",
    "variable_values",
    "field_resolver",
    "type_resolver",
    "subscribe_field_resolver",
    "middleware_manager",
    "is_awaitable",
    "is_async_iterable",
    "hide_suggestions",
    "hooks",
)
"""What the executors of a subscription's events share with its operation's, by the name graphql-core's
``Executor`` takes it under."""


class EventExecutors:
    """Executors of a subscription's events, made as graphql-core makes them (its operation's executor, with the
    event as the root) from a few references to what they share, rather than from a kept executor: a standing
    subscription holds this between events (about 200 bytes; an executor holds 3 KiB of per-execution state)."""

    __slots__ = ("_class", "_extensions", "_shared")

    def __init__(self, executor: CompiledExecutor) -> None:
        self._class = type(executor)
        self._extensions = executor.operation_extensions
        manager = executor.middleware_manager
        # An empty manager (no extension has a resolve hook) wraps nothing: the events run without one.
        empty = manager is not None and not manager.middlewares
        self._shared = tuple(
            None if empty and name == "middleware_manager" else getattr(executor, name) for name in _SHARED
        )

    async def execute(self, event: Any, context: Context) -> ExecutionResult:
        """Execute the operation for one event: ``event`` is its root, ``context`` its context."""
        shared = dict(zip(_SHARED, self._shared, strict=True))
        executor = self._class(root_value=event, context_value=context, operation_extensions=self._extensions, **shared)
        try:
            result = executor.execute_operation(False)
            if isawaitable(result):
                result = await result
        finally:
            # Also where the execution raised, so that no response was built (``build_response``).
            executor.let_go_of_helpers()
        assert isinstance(result, ExecutionResult)  # a subscription's event is never delivered incrementally
        return result


class CompiledExecutor(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's executor (as strawberry runs it) that takes what it can from the operation's ``Plan``.

    Without a plan (no per-document cache, compilation turned off, an operation not compiled) it is graphql-core's
    executor unchanged; either way the request's context records which it was, for ``/metrics``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plan: Plan | None = None
        self._flags: _Flags = ()
        self._arguments: dict[int, dict[str, Any]] = {}
        """The arguments of the plan's fields that take variables, by the field's identity, once coerced."""
        context = self.context_value
        if not isinstance(context, Context):
            return
        context.executed = "interpreted"
        if self.operation.operation is OperationType.SUBSCRIPTION and context.events is None:
            context.events = EventExecutors(self)
        if not context.compiled or context.plans is None:
            return
        key = id(self.operation)
        plan = context.plans.get(key)
        if plan is None:
            plan = context.plans[key] = Plan(self.operation, self.fragment_definitions)
        if not plan.compiled:
            return
        self._plan = plan
        coerced = self.variable_values.coerced
        self._flags = tuple(coerced.get(name) for name in plan.flag_names)
        manager = self.middleware_manager
        # A resolve hook of an extension wraps every resolver: the plan's direct reads would skip it.
        self._direct = manager is None or not manager.middlewares
        context.executed = "compiled"

    def build_response(self, data: dict[str, Any] | None) -> ExecutionResult | ExperimentalIncrementalExecutionResults:
        """graphql-core's response; then the executor lets go of its own methods.

        graphql-core's executor holds two of its bound methods in ``async_helpers``: a reference cycle, through the
        context, to all a request read (its reader, items, pages and objects), which only a garbage collection could
        free. Measured in process: about 800 objects per request of a 100-edge page, and 8 to 10% of the CPU of the
        largest operations spent collecting them. The response is the end of the execution: the resolve infos
        already made keep their own reference to the helpers, and no other is made. Each event of a subscription
        has an executor of its own (``EventExecutors``), which lets go of them the same way."""
        response = super().build_response(data)
        self.let_go_of_helpers()
        return response

    def let_go_of_helpers(self) -> None:
        """Break the executor's cycle through ``async_helpers`` (see ``build_response``); once is enough."""
        self.__dict__.pop("async_helpers", None)

    def execute_collected_root_fields(
        self,
        root_type: GraphQLObjectType,
        root_value: Any,
        grouped_field_set: GroupedFieldSet,
        serially: bool,
        new_defer_usages: Sequence[Any],
    ) -> AwaitableOrValue[dict[str, Any]]:
        plan = self._plan
        if plan is not None:
            grouped_field_set = plan.roots.setdefault(self._flags, grouped_field_set)
        return super().execute_collected_root_fields(
            root_type, root_value, grouped_field_set, serially, new_defer_usages
        )

    def collect_subfields(
        self, return_type: GraphQLObjectType, field_details_list: FieldDetailsList
    ) -> CollectedFields:
        plan = self._plan
        if plan is None:
            return super().collect_subfields(return_type, field_details_list)
        key = (self._flags, return_type.name, id(field_details_list))
        kept = plan.subfields.get(key)
        if kept is None:
            kept = plan.subfields[key] = (
                field_details_list,
                super().collect_subfields(return_type, field_details_list),
            )
        return kept[1]

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: GroupedFieldSet,
        position_context: Any,
    ) -> AwaitableOrValue[dict[str, Any]]:
        """graphql-core's ``execute_fields``, with the leaf fields the plan completes done in the loop: no path,
        resolve info or call of ``execute_field`` for them unless one fails."""
        plan = self._plan
        if plan is None or not self._direct or position_context is not None:
            return super().execute_fields(parent_type, source_value, path, grouped_field_set, position_context)
        results: dict[str, Any] = {}
        awaitable: list[str] = []
        is_awaitable = self.is_awaitable
        try:
            for name, details, field in plan.grouped(self, parent_type, grouped_field_set):
                if field is None:
                    continue
                if field.leaf is not None:
                    try:
                        results[name] = field.complete(field.read(source_value))
                    except Exception as raw_error:
                        field_path = Path(path, name, parent_type.name)
                        self.handle_field_error(raw_error, field.definition.type, details, field_path)
                        results[name] = None
                    continue
                if field.object is not None:
                    result = self._objects(
                        field, details, parent_type, source_value, Path(path, name, parent_type.name)
                    )
                    results[name] = result
                    if is_awaitable(result):
                        awaitable.append(name)
                    continue
                result = self.execute_field(
                    parent_type, source_value, details, Path(path, name, parent_type.name), position_context
                )
                if result is not Undefined:
                    results[name] = result
                    if is_awaitable(result):
                        awaitable.append(name)
        except Exception:
            if awaitable:
                # As graphql-core does: the awaitables other fields started may fail too, and must be settled.
                self.settle_in_background([results[name] for name in awaitable])
            raise
        if not awaitable:
            return results
        return self._gathered(results, awaitable)

    def _objects(
        self, field: _Field, details: FieldDetailsList, parent_type: GraphQLObjectType, source: Any, path: Path
    ) -> AwaitableOrValue[Any]:
        """An ``object`` field's value: read without resolve info, its object or objects go straight to their
        fields (``_straight``); any other value (null, an awaitable, an object ``is_type_of`` refuses) is completed
        as ``complete_value`` completes it, with a resolve info made for it then; where the root holds a
        placeholder (``_held_call``), the field's resolver is called as ``execute_field`` calls it. Errors as
        ``execute_field``."""
        definition = field.definition
        assert field.plain is not None
        try:
            value = field.plain(source)
        except Exception as raw_error:
            self.handle_field_error(raw_error, definition.type, details, path)
            return None
        if value is _HELD_ELSEWHERE:
            return self.execute_field(parent_type, source, details, path, None)
        if isinstance(value, Exception):  # a value that stands for its error (DATA_MISMATCH), as graphql-core takes it
            self.handle_field_error(value, definition.type, details, path)
            return None
        try:
            completed = self._straight(field, details, value, path)
            if completed is Undefined:
                info = self.build_resolve_info(definition, field.nodes, parent_type, path)
                if self.is_awaitable(value):
                    return self.complete_awaitable_value(definition.type, details, info, path, value, None)
                completed = self.complete_value(definition.type, details, info, path, value, None)
        except Exception as raw_error:
            self.handle_field_error(raw_error, definition.type, details, path)
            return None
        if self.is_awaitable(completed):
            return self._settled(completed, definition.type, details, path)
        return completed

    def _straight(self, field: _Field, details: FieldDetailsList, value: Any, path: Path) -> AwaitableOrValue[Any]:
        """``value``'s object, or list of objects, each completed by its fields straight away, as ``complete_value``
        would complete it; Undefined for a value that would take another step (null, an awaitable, an object
        ``is_type_of`` refuses, a list holding any of those)."""
        object_type = field.object
        assert object_type is not None
        is_type_of = object_type.is_type_of
        is_awaitable = self.is_awaitable
        item_type = field.item
        if item_type is None:
            if value is None or (is_type_of(value, _NO_INFO) is not True if is_type_of else is_awaitable(value)):
                return Undefined
            grouped = self.collect_subfields(object_type, details).grouped_field_set
            return self.execute_fields(object_type, value, path, grouped, None)
        if type(value) is not list:
            return Undefined
        for item in value:
            if item is None or (is_type_of(item, _NO_INFO) is not True if is_type_of else is_awaitable(item)):
                return Undefined
        grouped = self.collect_subfields(object_type, details).grouped_field_set
        items: list[Any] = []
        waiting: list[int] = []
        try:
            for index, item in enumerate(value):
                item_path = path.add_key(index, None)
                try:
                    one = self.execute_fields(object_type, item, item_path, grouped, None)
                except Exception as raw_error:
                    self.handle_field_error(raw_error, item_type, details, item_path)
                    items.append(None)
                    continue
                if is_awaitable(one):
                    items.append(self._settled(one, item_type, details, item_path))
                    waiting.append(index)
                else:
                    items.append(one)
        except Exception:
            if waiting:
                self.settle_in_background([items[index] for index in waiting])
            raise
        if not waiting:
            return items
        return self._gathered(items, waiting)

    async def _gathered(self, results: _Completed, awaitable: Sequence[Any]) -> _Completed:
        """``results`` (an object's fields by name, or a list's items) with what it holds at ``awaitable`` awaited
        in place, together, as graphql-core gathers them."""
        if len(awaitable) == 1:
            results[awaitable[0]] = await results[awaitable[0]]
        else:
            answers = await gather_with_cancel(*(results[key] for key in awaitable))
            for key, answer in zip(awaitable, answers, strict=True):
                results[key] = answer
        return results

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: FieldDetailsList,
        path: Path,
        position_context: Any,
    ) -> AwaitableOrValue[Any] | UndefinedType:
        plan = self._plan
        if plan is None or position_context is not None:
            return super().execute_field(parent_type, source, field_details_list, path, position_context)
        field = plan.field(self, parent_type, field_details_list)
        if field is None:
            return Undefined
        return_type = field.definition.type
        try:
            if field.leaf is not None and self._direct:
                return field.complete(field.read(source))
            return self._resolved(field, parent_type, source, field_details_list, path, position_context)
        except Exception as raw_error:
            self.handle_field_error(raw_error, return_type, field_details_list, path)
            return None

    def _resolved(
        self,
        field: _Field,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: FieldDetailsList,
        path: Path,
        position_context: Any,
    ) -> AwaitableOrValue[Any]:
        """graphql-core's ``execute_field`` past its look-ups, with the plan's arguments when they are literal."""
        definition = field.definition
        return_type = definition.type
        info = self.build_resolve_info(definition, field.nodes, parent_type, path)
        arguments = field.arguments
        if arguments is None:  # coerced even when the resolver reads none: a bad one errs at its field as before
            arguments = self._arguments.get(id(field))
            if arguments is None:
                first = field_details_list[0]
                arguments = get_argument_values(
                    definition, first.node, self.variable_values, first.fragment_variable_values, self.hide_suggestions
                )
                if first.fragment_variable_values is None:
                    # The same for every object this request reaches the field on: its variables are the request's.
                    self._arguments[id(field)] = arguments
        if field.attribute is not None and self._direct:
            assert field.plain is not None  # the attribute's getter
            result = field.plain(source)
        elif field.call is not None and self._direct:
            result = field.call(source, info)
        else:
            resolve = field.resolve
            if self.middleware_manager:
                resolve = self.middleware_manager.get_field_resolver(resolve)
            result = resolve(source, info, **arguments)
        if self.is_awaitable(result):
            return self.complete_awaitable_value(return_type, field_details_list, info, path, result, position_context)
        completed = self.complete_value(return_type, field_details_list, info, path, result, position_context)
        if self.is_awaitable(completed):
            return self._settled(completed, return_type, field_details_list, path)
        return completed

    async def _settled(
        self,
        completed: Awaitable[Any],
        return_type: GraphQLOutputType,
        field_details_list: FieldDetailsList,
        path: Path,
    ) -> Any:
        try:
            return await completed
        except Exception as raw_error:
            self.handle_field_error(raw_error, return_type, field_details_list, path)
            return None

    def complete_value(
        self,
        return_type: GraphQLOutputType,
        field_details_list: FieldDetailsList,
        info: GraphQLResolveInfo[Any],
        path: Path,
        result: Any,
        position_context: Any,
    ) -> AwaitableOrValue[Any]:
        """graphql-core's ``complete_value``, its steps in its order, with objects and lists completed here: an
        object goes straight to its kept fields, a list's items straight to their completion, without the four
        calls per object and the stream look-up per list graphql-core makes. Leaves, abstract types and lists that
        are not Python lists are graphql-core's."""
        if self._plan is None or position_context is not None:
            return super().complete_value(return_type, field_details_list, info, path, result, position_context)
        if isinstance(result, Exception):
            raise result
        if isinstance(return_type, GraphQLNonNull):
            completed = self.complete_value(return_type.of_type, field_details_list, info, path, result, None)
            if completed is None:
                raise TypeError(f"Cannot return null for non-nullable field {info.parent_type}.{info.field_name}.")
            return completed
        if result is None or result is Undefined:
            return None
        if isinstance(return_type, GraphQLObjectType):
            return self.complete_object_value(return_type, field_details_list, info, path, result, None)
        if isinstance(return_type, GraphQLList) and isinstance(result, list):
            return self._list(return_type.of_type, field_details_list, info, path, result)
        return super().complete_value(return_type, field_details_list, info, path, result, None)

    def complete_object_value(
        self,
        return_type: GraphQLObjectType,
        field_details_list: FieldDetailsList,
        info: GraphQLResolveInfo[Any],
        path: Path,
        result: Any,
        position_context: Any,
    ) -> AwaitableOrValue[dict[str, Any]]:
        """graphql-core's ``complete_object_value`` (also reached from an interface's or union's completion): an
        object that ``is_type_of`` takes goes straight to its kept fields; one it refuses, or answers later, takes
        graphql-core's own path, which says why."""
        if self._plan is None or position_context is not None:
            return super().complete_object_value(return_type, field_details_list, info, path, result, position_context)
        is_type_of = return_type.is_type_of
        if is_type_of is not None and is_type_of(result, info) is not True:
            return super().complete_object_value(return_type, field_details_list, info, path, result, None)
        grouped_field_set = self.collect_subfields(return_type, field_details_list).grouped_field_set
        return self.execute_fields(return_type, result, path, grouped_field_set, None)

    def _list(
        self,
        item_type: GraphQLOutputType,
        field_details_list: FieldDetailsList,
        info: GraphQLResolveInfo[Any],
        path: Path,
        items: list[Any],
    ) -> AwaitableOrValue[list[Any]]:
        """graphql-core's ``complete_iterable_value`` and ``complete_list_item_value`` in one loop (a plan has no
        ``@stream``)."""
        is_awaitable = self.is_awaitable
        completed: list[Any] = []
        waiting: list[int] = []
        try:
            for index, item in enumerate(items):
                item_path = path.add_key(index, None)
                if is_awaitable(item):
                    completed.append(
                        self.complete_awaitable_list_item_value(
                            item, item_type, field_details_list, info, item_path, None
                        )
                    )
                    waiting.append(index)
                    continue
                try:
                    one = self.complete_value(item_type, field_details_list, info, item_path, item, None)
                except Exception as raw_error:
                    self.handle_field_error(raw_error, item_type, field_details_list, item_path)
                    completed.append(None)
                    continue
                if is_awaitable(one):
                    completed.append(self._settled(one, item_type, field_details_list, item_path))
                    waiting.append(index)
                else:
                    completed.append(one)
        except Exception:
            if waiting:
                self.settle_in_background([completed[index] for index in waiting])
            raise
        if not waiting:
            return completed
        return self._gathered(completed, waiting)
