"""The Subscription type of a declaration: changes to each collection and to any object by global id.

Each event carries its ``kind``, the object as written (as it was, for a delete) resolved through the normal
selection and reader, and its stream ``position``; a subscriber passes its last position as ``after`` to resume.
The guard is applied twice: to the subscription's arguments before it starts (as to a query's), and to every
change before it is delivered (the item must be one the subscriber may read).

A subscription's field runs as GraphQL says only until it holds its watch (and has replayed what a resumed one
missed); then its run stands (``live.shares``): each change is executed as GraphQL executes a subscription's event,
by graphql-core's executor of the operation with the event as its root, without an open execution between changes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from enum import Enum
from typing import Annotated, Any

import strawberry
from graphql import ExecutionResult, GraphQLError, GraphQLObjectType, get_named_type

from gateway.design import global_ids
from gateway.design.keys import validate_id
from gateway.design.model import Collection, Entity, graphql_name, lower_camel
from gateway.dynamo.accounting import Ledger
from gateway.errors import Unavailable
from gateway.execution import selection
from gateway.execution.guard import Guard
from gateway.execution.reader import Reader
from gateway.live.fanout import Change, Topic, Watch, collection_topic, item_topic
from gateway.live.shares import Result
from gateway.surface.builder import Builder
from gateway.surface.context import Context, Live
from gateway.surface.toolkit import Fields, Info, id_argument, id_type, new_class, resolve_info, signature
from gateway.surface.types import Node


@strawberry.enum(description="What happened to the item.")
class ChangeKind(Enum):
    CREATED = strawberry.enum_value("CREATED", description="It was created.")
    UPDATED = strawberry.enum_value("UPDATED", description="It was changed.")
    DELETED = strawberry.enum_value("DELETED", description="It was deleted; the event carries it as it was.")


POSITION = "Where this change is in the table's stream: pass it as after to resume from it (within 24 hours)."
AFTER = (
    "Resume after this position, taken from an earlier event: the changes since are delivered first, in order. "
    "A position older than the stream's retention (24 hours) is refused with POSITION_EXPIRED."
)
ResumeAfter = Annotated[str | None, strawberry.argument(description=AFTER)]


@strawberry.type(description="A change to an object named by its global id.")
class NodeChange:
    kind: ChangeKind = strawberry.field(description="What happened.")
    position: str = strawberry.field(description=POSITION)
    node: Node | None = strawberry.field(description="The object as written; as it was, for a delete.")


def subscription_type(builder: Builder) -> Any | None:
    """The Subscription root type of the builder's declaration."""
    return _Subscriptions(builder).root()


class _Subscriptions:
    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.model = builder.model
        self.changes: dict[str, Any] = {}

    def root(self) -> Any:
        fields = Fields("Subscription")
        for collection in self.model.collections:
            if collection.is_union:
                continue  # each kind changes through its own collection's subscription, or nodeChanged
            ends = (collection.parent, collection.entity)
            if all(self.builder.serves(one) for one in ends):
                name = lower_camel(collection.parent.name) + collection.field[:1].upper() + collection.field[1:]
                description = (
                    f"Each {collection.entity.name} created, changed or deleted among {collection.name}, "
                    "whoever wrote it."
                )
                _subscription(
                    fields,
                    f"{name}Changed",
                    self._change_type(collection.entity),
                    self._collection(collection),
                    description,
                )
        description = "Each change to the object with this global id, whoever wrote it."
        _subscription(fields, "nodeChanged", NodeChange, self._node(), description)
        cls = new_class("Subscription")
        return strawberry.type(fields.apply(cls), description="Changes to the table, from its stream, as they happen.")

    def _change_type(self, entity: Entity) -> Any:
        if entity.name not in self.changes:
            fields = Fields(f"{entity.name}Change")
            fields.plain("kind", ChangeKind, "What happened.")
            fields.plain("position", str, POSITION)
            fields.plain("node", self.builder.types[entity.name], f"The {entity.name}; as it was, for a delete.")
            cls = fields.apply(new_class(fields.owner))
            self.changes[entity.name] = strawberry.type(cls, description=f"A change to {entity.name} items.")
        return self.changes[entity.name]

    def _collection(self, collection: Collection) -> Callable[..., Any]:
        parent = collection.parent
        change_type = self._change_type(collection.entity)

        def event(change: Change) -> Any:
            return change_type(kind=ChangeKind(change.kind), position=change.position, node=self._object(change))

        async def resolve(root: Any, info: Info, **arguments: Any) -> AsyncGenerator[Any, None]:
            ids = self.model.canonical(
                parent,
                {name: validate_id(arguments[f"p{i}"], graphql_name(name)) for i, name in enumerate(parent.id_fields)},
            )
            info.context.guard.check_query(collection, ids)
            topic = collection_topic(collection.name, parent, ids)
            async for change in self._changes(info, [topic], arguments.get("after"), event):
                yield event(change)

        parameters = [
            (f"p{i}", id_argument(name, f"The {parent.name}'s {name}.", id_type(self.model, parent, name)))
            for i, name in enumerate(parent.id_fields)
        ]
        return signature(resolve, parameters, [("after", ResumeAfter)])

    def _node(self) -> Callable[..., Any]:
        async def resolve(root: Any, info: Info, **arguments: Any) -> AsyncGenerator[Any, None]:
            entity, ids = global_ids.decode(self.model, arguments["p0"], "id")
            info.context.guard.check_item(entity, ids)
            topic = item_topic(self.model, entity, ids)
            async for change in self._changes(info, [topic], arguments.get("after"), self._node_change):
                yield self._node_change(change)

        return signature(
            resolve,
            [("p0", id_argument("id", "A global id, as an object's id field gave it."))],
            [("after", ResumeAfter)],
        )

    def _object(self, change: Change) -> Any:
        return self.builder.makers[change.entity.name](change.ids, change.item)

    def _node_change(self, change: Change) -> NodeChange:
        return NodeChange(kind=ChangeKind(change.kind), position=change.position, node=self._object(change))

    async def _changes(
        self, info: Info, topics: Sequence[Topic], after: str | None, event: Callable[[Change], Any]
    ) -> AsyncIterator[Change]:
        """The changes a resumed subscriber missed, each with its selection read ahead through a reader of its own;
        then the subscription's run stands on its watch, resolving each change it receives into ``event``."""
        context: Context = info.context
        live = context.live
        if live is None or live.run is None or live.finish is None or context.events is None:
            raise Unavailable("subscriptions are served over WebSocket and server-sent events")
        ahead = _selected_nodes(info)
        watch = live.feed.watch(topics, from_now=after is None)
        held = True
        try:
            live.run.watching(watch, shareable=after is None)
            replayed: set[str] = set()
            if after is not None:
                async for change in live.feed.replay(after, topics):
                    replayed.add(change.position)
                    reader = await _read(context.guard, context.request_id, live, change, ahead)
                    if reader is not None:
                        context.reader = reader
                        yield change
            live.run.stand(_Events(context, live, live.finish, watch, ahead, event, replayed))
            held = False  # the run holds it from now on
        finally:
            if held:
                live.feed.unwatch(watch)


class _Events:
    """A standing subscription (``live.shares.Standing``): its watch, and how it resolves a change, as graphql-core
    executes a subscription's event, with the event as the root and a context and reader of its own. It keeps what
    that needs and no more: an idle run holds no executor and no request context."""

    __slots__ = (
        "ahead",
        "compiled",
        "event",
        "executors",
        "finish",
        "guard",
        "live",
        "plans",
        "replayed",
        "request",
        "watch",
    )

    def __init__(
        self,
        context: Context,
        live: Live,
        finish: Callable[[ExecutionResult, str], Result],
        watch: Watch,
        ahead: _Ahead,
        event: Callable[[Change], Any],
        replayed: set[str],
    ) -> None:
        assert context.events is not None
        self.executors = context.events
        self.guard = context.guard
        self.request = context.request_id
        self.compiled = context.compiled
        self.plans = context.plans
        self.live = live
        self.finish = finish
        self.watch = watch
        self.ahead = ahead
        self.event = event
        self.replayed = replayed or None
        """Positions a resumed subscription replayed, which its watch may receive again."""

    async def respond(self, change: Change) -> Result | None:
        if self.replayed is not None and change.position in self.replayed:
            change.reads.done()
            return None
        reader = await _read(self.guard, self.request, self.live, change, self.ahead)
        if reader is None:
            return None
        context = Context(
            self.request,
            reader,
            reader.ledger,
            live=self.live,
            compiled=self.compiled,
            plans=self.plans,
            events=self.executors,
        )
        result = await self.executors.execute(self.event(change), context)
        return self.finish(result, self.request)

    def failed(self, error: Exception) -> Result:
        graphql_error = error if isinstance(error, GraphQLError) else GraphQLError(str(error), original_error=error)
        return self.finish(ExecutionResult(data=None, errors=[graphql_error]), self.request)

    def release(self) -> None:
        self.live.feed.unwatch(self.watch)


def _subscription(fields: Fields, name: str, annotation: Any, resolver: Callable[..., Any], description: str) -> None:
    field = strawberry.field(
        resolver=resolver, graphql_type=annotation, name=name, description=description, is_subscription=True
    )
    fields.add(name, annotation, field)


_Ahead = list[tuple[selection.Scope, selection.Field, str]]
"""The event's ``node`` fields as selected, with what reading ahead for them needs: the same for every event."""


def _selected_nodes(info: Info) -> _Ahead:
    raw = resolve_info(info)
    event = get_named_type(raw.return_type)
    if not isinstance(event, GraphQLObjectType):
        return []
    scope = selection.Scope.of(raw)
    sets = [node.selection_set for node in raw.field_nodes if node.selection_set is not None]
    return [
        (scope, one, f"{raw.path.key}.{one.key}") for one in selection.fields(scope, event, sets) if one.name == "node"
    ]


async def _read(guard: Guard, request_id: str, live: Live, change: Change, ahead: _Ahead) -> Reader | None:
    """None when the subscriber may not see ``change``; else a reader of its own over the change's shared reads,
    holding what its node selects, read round by round as a query's walk would."""
    try:
        if not (guard.permits_item(change.entity, change.ids) and guard.visible(change.entity, change.item)):
            return None
        if live.run is not None:
            live.run.resolving(change)
        reader = Reader(change.reads, live.settings, live.codec, Ledger(), guard, request_id)
        for scope, field, path in ahead:
            await reader.expand_field(change.entity, change.item, scope, field, path)
        return reader
    finally:
        change.reads.done()
