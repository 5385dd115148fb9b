"""Building strawberry classes from data: fields by name, resolvers with declared signatures, names."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Annotated, Any, TypeVar

import strawberry
from graphql import GraphQLResolveInfo, GraphQLSchema
from strawberry.types.private import StrawberryPrivate

from gateway.design.model import Entity, Model, graphql_name
from gateway.design.naming import field_name, python_attribute
from gateway.surface.context import Context
from gateway.surface.types import Long

Info = strawberry.Info[Context, None]


def resolve_info(info: Info) -> GraphQLResolveInfo[Any]:
    """graphql-core's resolve info behind strawberry's: the field nodes, parent type and fragments the look-ahead
    reads. strawberry exposes no public way to it; this is the one place that reaches for it."""
    raw: GraphQLResolveInfo[Any] = info._raw_info
    return raw


def graphql_schema(schema: strawberry.Schema) -> GraphQLSchema:
    """graphql-core's schema behind strawberry's (no public accessor either): validation and the cost check read it."""
    return schema._schema


def reads_attribute(resolve: Callable[..., Any]) -> bool:
    """Whether ``resolve`` is strawberry's resolver of a field without resolver, extension or error handler: it
    reads the attribute and ignores its resolve info, so the compiled executor calls it without building one.
    strawberry marks it only by its name; a renamed one is called as any resolver, with its info."""
    return getattr(resolve, "__name__", "") == "_get_basic_result" and getattr(resolve, "_is_default", False)


class Fields:
    """The fields of one generated class, in order, by declared name (a stored attribute's own): each is carried by
    its Python attribute (``naming.python_attribute``) and served under its GraphQL name (``naming.field_name``,
    or the one given). Two fields served under one name is a modelling error, reported at start-up."""

    def __init__(self, owner: str, taken: Sequence[str] = ()) -> None:
        self.owner = owner
        self.taken = {name: name for name in taken}
        self.annotations: dict[str, Any] = {}
        self.values: dict[str, Any] = {}

    def add(self, name: str, annotation: Any, field: Any, served: str | None = None) -> None:
        served = field_name(name) if served is None else served
        other = self.taken.setdefault(served, name)
        if other != name or python_attribute(name) in self.values:
            both = "" if other == name else f" ({other!r} and {name!r})"
            raise ValueError(
                f"{self.owner}.{served}: two fields of the same name{both}; serve one under a name of its own with"
                f' field= (Python: {name!r}: Attribute(..., field="..."); YAML: field: ...)'
            )
        if annotation is not None:
            self.annotations[python_attribute(name)] = annotation
        self.values[python_attribute(name)] = field

    def plain(
        self, name: str, annotation: Any, description: str | None, served: str | None = None, **default: Any
    ) -> None:
        served = field_name(name) if served is None else served
        self.add(name, annotation, strawberry.field(name=served, description=description, **default), served)

    def resolved(
        self,
        name: str,
        annotation: Any,
        resolver: Callable[..., Any],
        description: str | None,
        served: str | None = None,
    ) -> None:
        served = field_name(name) if served is None else served
        field = strawberry.field(resolver=resolver, graphql_type=annotation, name=served, description=description)
        self.add(name, annotation, field, served)

    def private(self, name: str) -> None:
        self.annotations[name] = Annotated[Any, StrawberryPrivate()]

    def apply(self, cls: Any) -> Any:
        cls.__annotations__ = self.annotations
        for name, value in self.values.items():
            setattr(cls, name, value)
        return cls


_made = itertools.count()
NAMED: ContextVar[list[str] | None] = ContextVar("named", default=None)
"""While a schema is built, every GraphQL type name it makes, in order: a name made twice is two types that would
be one (an entity called ``CourseResult`` beside ``Course``'s mutation results)."""


def named(name: str) -> str:
    """``name``, recorded as a type the schema being built makes."""
    made = NAMED.get()
    if made is not None:
        made.append(name)
    return name


def new_class(name: str, *bases: type) -> Any:
    """A class for a GraphQL type named ``name``. Its qualified name is its own (``Query.3``): strawberry takes two
    classes of one module and qualified name for one type, so two alike named would silently be one."""
    return type(named(name), bases, {"__module__": "gateway.surface.graph", "__qualname__": f"{name}.{next(_made)}"})


ARGUMENTS_FROM_THE_OPERATION = "_tablegraph_arguments_from_the_operation"
"""Marks a resolver that takes its arguments from the operation (the look-ahead's reading of its field), not from
its parameters: the compiled executor calls it without strawberry converting arguments it would not read."""


def reads_arguments_from_the_operation(resolve: Callable[..., Any]) -> Callable[..., Any]:
    setattr(resolve, ARGUMENTS_FROM_THE_OPERATION, True)
    return resolve


_Resolver = TypeVar("_Resolver", bound=Callable[..., Any])

HELD_IN = "_tablegraph_held_in"
"""Marks a resolver that returns what its root holds in an attribute whenever that is not a placeholder: see
``returns_what_the_root_holds``."""


def returns_what_the_root_holds(attribute: str, placeholder: type) -> Callable[[_Resolver], _Resolver]:
    """Mark a resolver that returns ``getattr(root, attribute)`` unless that is an instance of ``placeholder``, and
    only then needs its arguments and info: the compiled executor reads the attribute itself, and calls the
    resolver only for a placeholder."""

    def mark(resolve: _Resolver) -> _Resolver:
        setattr(resolve, HELD_IN, (attribute, placeholder))
        return resolve

    return mark


def signature(
    resolve: Callable[..., Any],
    parameters: Sequence[tuple[str, Any]],
    optional: Sequence[tuple[str, Any]] = (),
    defaulted: Sequence[tuple[str, Any, Any]] = (),
) -> Callable[..., Any]:
    """``resolve`` (root, info, keyword arguments) exposing these arguments, the ``optional`` ones with a null
    default and the ``defaulted`` ones with theirs: their names come from the declaration."""
    kinds = inspect.Parameter
    with_defaults = [*((name, annotation, None) for name, annotation in optional), *defaulted]
    signature = inspect.Signature(
        [
            kinds("root", kinds.POSITIONAL_OR_KEYWORD),
            kinds("info", kinds.POSITIONAL_OR_KEYWORD, annotation=Info),
            *(kinds(name, kinds.KEYWORD_ONLY, annotation=annotation) for name, annotation in parameters),
            *(
                kinds(name, kinds.KEYWORD_ONLY, annotation=annotation, default=default)
                for name, annotation, default in with_defaults
            ),
        ]
    )
    # strawberry reads the arguments from the signature and resolves their annotations from __annotations__.
    resolve.__signature__ = signature  # type: ignore[attr-defined]  # functions take any attribute at run time
    resolve.__annotations__ = {
        "info": Info,
        **dict(parameters),
        **{name: annotation for name, annotation, _ in with_defaults},
    }
    return resolve


def id_argument(name: str, description: str, type_: Any = strawberry.ID) -> Any:
    return Annotated[type_, strawberry.argument(name=graphql_name(name), description=description)]


def id_type(model: Model, entity: Entity, name: str) -> Any:
    """An id's GraphQL type: ``Long`` for a number key's whole value, ``ID`` for any other (binary as base64)."""
    return Long if model.id_type(entity, name) == "N" else strawberry.ID


def list_or_null(item: Any) -> Any:
    return list[item] | None


def verbs_of(entity: Entity) -> dict[str, str]:
    return {verb: entity.verbs.get(verb, verb + entity.name) for verb in ("create", "update", "delete")}


def upper_first(name: str) -> str:
    return name[:1].upper() + name[1:]


def article(name: str) -> str:
    return "an" if name[:1].upper() in "AEIOU" else "a"
