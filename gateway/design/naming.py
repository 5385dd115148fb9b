"""Declared names as served: the GraphQL field of each stored attribute, and the Python attribute carrying its value."""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gateway.design.model import Attribute

_WORDS = re.compile(r"[0-9A-Za-z]+")


def graphql_name(name: str) -> str:
    """A declared name as GraphQL spells it, in camelCase: ``user_id`` is ``userId``, ``LikeCount`` is
    ``likeCount``, ``URLPath`` is ``urlPath``; ``userId`` stays."""
    head, *rest = name.split("_")
    return _lower_head(head) + "".join(part[:1].upper() + part[1:] for part in rest)


def _lower_head(word: str) -> str:
    """``word`` with its leading capitals lowered, but the one that starts the next word (``URLPath``)."""
    capitals = len(word) - len(word.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if capitals == 0:
        return word
    if capitals == len(word) or not word[capitals].isalpha():
        return word[:capitals].lower() + word[capitals:]
    keep = max(capitals - 1, 1)
    return word[:keep].lower() + word[keep:]


def is_python_name(name: str) -> bool:
    """Whether a stored name is its own Python attribute, served as ``graphql_name`` spells it: an identifier, no
    keyword, not led by ``_``."""
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def field_name(name: str, spec: Attribute | None = None) -> str:
    """The GraphQL field that serves the stored attribute ``name``: the one its declaration gives (``field=``);
    else, for a Python name, ``graphql_name``; else the name's ASCII letters and digits, each run of other
    characters (``_`` too) starting a new camelCased word: ``_ct`` is ``ct``, ``follower#`` is ``follower``,
    ``default-card`` is ``defaultCard``, ``from`` stays ``from``; led by ``_`` where it would start with a digit."""
    if spec is not None and spec.field is not None:
        return spec.field
    if is_python_name(name):
        return graphql_name(name)
    served = graphql_name("_".join(_WORDS.findall(name)))
    if not served:
        raise ValueError(f"the stored name {name!r} holds no letter or digit to name a field by: give one with field=")
    return "_" + served if served[0].isdigit() else served


def python_attribute(name: str) -> str:
    """The Python attribute of a generated class that carries the stored attribute ``name``: the name itself where
    it is a Python name, else one spelled from it (``_s``, then each character not an ASCII letter or digit as
    ``_<hex>_``), which no Python name nor private attribute of ours (``_ids``) can be."""
    if is_python_name(name):
        return name
    return "_s" + "".join(c if c.isascii() and c.isalnum() else f"_{ord(c):x}_" for c in name)


def set_field_names(name: str, spec: Attribute) -> tuple[str, str]:
    """The GraphQL fields of an update that add members to the set ``name`` and remove members from it."""
    if spec.field is None:
        return field_name(f"add_to_{name}"), field_name(f"remove_from_{name}")
    served = spec.field[:1].upper() + spec.field[1:]
    return f"addTo{served}", f"removeFrom{served}"


def refuse_shared_fields(owner: str, declared: Mapping[str, Attribute]) -> None:
    """Refuse two stored attributes of one entity or shape that would be served as one GraphQL field."""
    seen: dict[str, str] = {}
    for name, spec in declared.items():
        served = field_name(name, spec)
        other = seen.setdefault(served, name)
        if other != name:
            raise ValueError(
                f"{owner}: the stored names {other!r} and {name!r} are both served as the field {served!r}: give one"
                f' a field name of its own, {name!r}: Attribute(..., field="...") (in YAML, field: ...)'
            )
