"""Partition authorization: the tenants a caller may touch, checked on the keys of a request before it is sent.

A tenant is named by an id field of the model (``orgName``, ``workspaceId``, ...), declared once as a
:class:`Tenancy`. The guard reads a key's tenant from the entity's key templates, never from string prefixes, so
what it checks is exactly what the request will address:

- a point read or write of an item: every tenant id in the item's table key must be granted;
- a Query: every tenant id its partition key fixes must be granted, and a partition that holds items of many
  tenants (a course's roster on the inverted index) needs the admin role;
- an item whose tenant is only in a secondary key (a ticket read by its id) can only be judged once read: the
  reader then hides it, as if it did not exist.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gateway.design.keys import Ids
from gateway.design.model import Collection, Entity, Model
from gateway.design.tenancy import Tenancy
from gateway.errors import Forbidden


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: the tenants it was granted, by grant name, and whether it is an admin."""

    subject: str
    grants: Mapping[str, frozenset[str]] = field(default_factory=dict)
    admin: bool = False

    def may(self, grant: str, value: str) -> bool:
        return self.admin or value in self.grants.get(grant, frozenset())


OPEN = Principal("anonymous", admin=True)


class Guard:
    """One caller's rights, applied to the keys the reader and the writer are about to send."""

    def __init__(self, model: Model, tenancy: Tenancy, principal: Principal) -> None:
        self.model = model
        self.tenancy = tenancy
        self.principal = principal

    def standing(self) -> Hashable:
        """What this guard's decisions depend on: the admin role, or the caller's grants that the tenancy names.

        Two guards of equal standing permit, hide and refuse the same items, so subscribers of equal standing may
        share one resolution of a change without one ever seeing what the other may not.
        """
        if self.principal.admin:
            return ("admin",)
        named = set(self.tenancy.grants.values())
        return tuple(
            sorted((grant, tuple(sorted(held))) for grant, held in self.principal.grants.items() if grant in named)
        )

    # --- reads ----------------------------------------------------------------------------------------------

    def check_item(self, entity: Entity, ids: Ids) -> None:
        """Before reading or writing one item by its table key; raises Forbidden."""
        for name in self._tenant_fields(entity.id_fields):
            self._require(name, ids[name])

    def permits_item(self, entity: Entity, ids: Ids) -> bool:
        return self.principal.admin or all(
            self._granted(name, ids[name]) for name in self._tenant_fields(entity.id_fields)
        )

    def visible(self, entity: Entity, item: Mapping[str, Any]) -> bool:
        """After a read: whether the caller may see an item whose tenant only its secondary keys name."""
        if self.principal.admin:  # asked for every item read: an admin is answered before any set is built
            return True
        late = self._tenant_fields(entity.all_id_fields - set(entity.id_fields))
        if not late:
            return True
        ids = self.model.recognise(item, partial=True)
        return ids is not None and all(name in ids[1] and self._granted(name, ids[1][name]) for name in late)

    def check_query(self, collection: Collection, parent_ids: Ids) -> None:
        """Before a Query on ``collection``'s partition; raises Forbidden."""
        fixed = set(collection.member_shape.pk.fields)
        ids = collection.member_ids(parent_ids)
        for name in self._tenant_fields(frozenset().union(*(one.all_id_fields for one in collection.members))):
            if name in fixed:
                self._require(name, ids[name])
            elif not self.principal.admin:
                raise Forbidden(f"{collection.name} lists items of many tenants; it needs the admin role")

    def permits_query(self, collection: Collection, parent_ids: Ids) -> bool:
        try:
            self.check_query(collection, parent_ids)
        except Forbidden:
            return False
        return True

    # --- writes ---------------------------------------------------------------------------------------------

    def check_keys(self, keys: Iterable[Mapping[str, Any]]) -> None:
        """Before a write: each item or key it puts, updates, deletes or condition-checks; raises Forbidden.

        Pass whole items, or keys with every key attribute known (the table's and each index's): a tenant that
        none of the given attributes names cannot be shown to be the caller's, and only an admin may go ahead.
        """
        if self.principal.admin:
            return
        for key in keys:
            found = self.model.recognise(key, partial=True)
            if found is None:
                raise Forbidden("the write addresses an item of unknown shape")
            entity, ids = found
            for name in self._tenant_fields(entity.all_id_fields):
                if name not in ids:
                    raise Forbidden(f"the write does not show which {name} the {entity.name} belongs to")
                self._require(name, ids[name])

    def check_shared_write(self, entity: Entity) -> None:
        """Before creating, changing or deleting an item that names no tenant (a shared catalog entry).

        Such items belong to everyone, so only an admin may change them; a caller's own write may still move a
        counter on one (an enrolment counts on its course).
        """
        if not self.principal.admin and not self._tenant_fields(entity.all_id_fields):
            raise Forbidden(f"a {entity.name} is shared by all tenants; changing it needs the admin role")

    # --- helpers --------------------------------------------------------------------------------------------

    def _tenant_fields(self, names: Iterable[str]) -> list[str]:
        return [name for name in names if name in self.tenancy.grants]

    def _granted(self, name: str, value: str) -> bool:
        return self.principal.may(self.tenancy.grants[name], value)

    def _require(self, name: str, value: str) -> None:
        # The value stays out of the message: a write may have learnt it by reading an item the caller cannot see.
        if not self._granted(name, value):
            grant = self.tenancy.grants[name]
            raise Forbidden(f"not granted: this {name} is not among the caller's {grant}", grant=grant)
