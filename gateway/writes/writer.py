"""The writer: applies one mutation as conditional writes and explains a refusal as NotFound or Conflict.

Integrity is DynamoDB's job here, never a read followed by a write: a child is written in the same transaction
that checks its parents and moves their counters, an update is a compare-and-set on ``version``, and a parent
is deleted only by a write whose condition says its counters are 0.

A write whose answer was lost is sent again by botocore. Transactions carry a ``ClientRequestToken``, so DynamoDB
answers their retry as the first time. A single write has none: its retry is refused by its own condition, and the
writer recognises its own applied write (``building.outcome_of``) instead of reporting that refusal.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gateway.design.declaration import WriteModel
from gateway.design.keys import Ids
from gateway.design.model import Collection, Copy, Entity, Item, Model, Numbering
from gateway.design.naming import field_name, set_field_names
from gateway.design.rules import Rule, Transition
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.requests import Refused, WriteOp
from gateway.dynamo.store import Store
from gateway.errors import BadUserInput, Conflict, GatewayError, NotFound, Unavailable
from gateway.execution import queries
from gateway.execution.guard import Guard
from gateway.writes import building, copies
from gateway.writes import inputs as attribute_inputs
from gateway.writes.building import Member

log = logging.getLogger(__name__)

CASCADE_PAGE = 100
SEQUENCE_ATTEMPTS = 10
"""How often a numbered create takes the next number after other creates took the one it read."""
CASCADE_ROUNDS = 5
"""How often a cascade clears members and tries the parent again before it gives up (members kept coming)."""


@dataclass(frozen=True)
class _Applied:
    item: Item | None = None
    """The item after a single update, or after a single write applied by an attempt whose answer was lost
    (transactions return none)."""
    replayed: dict[str, Any] | None = None
    """The recorded result when the token's mutation had been applied before."""


@dataclass(frozen=True)
class Token:
    """A client's idempotency token and the fingerprint of the mutation it was sent with."""

    value: str
    fingerprint: str


class Writer:
    """Writes for one GraphQL request; every DynamoDB call it makes goes to that request's ledger."""

    def __init__(self, store: Store, declaration: WriteModel, ledger: Ledger, guard: Guard) -> None:
        self.store = store
        self.declaration = declaration
        self.model = declaration.model
        self.ledger = ledger
        self.guard = guard
        # Client tokens are the caller's own: the record of a token is found under the caller's digest of it.
        self.caller = guard.principal.subject
        self._claimed: tuple[Token, str] | None = None
        """The token and claim of the cascade this writer runs, whose progress each of its transactions counts."""

    # --- mutations ------------------------------------------------------------------------------------------

    async def create(self, entity: Entity, ids: Ids, attributes: Mapping[str, Any], token: Token | None = None) -> Item:
        """A new item at version 1; its parents must exist and count it, in the same transaction.

        A numbered id is the next number of its parent's counter, taken in that transaction too: a create that
        another one beat to the number (the counter moved since it was read) takes the next, up to
        ``SEQUENCE_ATTEMPTS`` times."""
        copied, expected = await self._copied(entity, ids)
        attributes = {**attributes, **copied}
        numbering, mint = entity.minted, entity.mint
        if not isinstance(numbering, Numbering) or mint is None:
            return await self._create(entity, ids, attributes, expected, token, None)
        seen = await self._sequence(numbering, ids)
        for _ in range(SEQUENCE_ATTEMPTS):
            number = str(seen + 1)
            # Stored copies of the minted id (``from_id``) are known only now.
            held = building.id_copies(entity, {mint: number})
            try:
                return await self._create(entity, {**ids, mint: number}, {**attributes, **held}, expected, token, seen)
            except _Outnumbered as lost:
                seen = lost.seen
        raise Conflict(
            f"{SEQUENCE_ATTEMPTS} creates of {entity.name} in a row lost {numbering.parent}.{numbering.counter}'s"
            " next number to other creates; try again",
            reason="CHANGED",
        )

    async def _create(
        self,
        entity: Entity,
        ids: Ids,
        attributes: Mapping[str, Any],
        expected: list[_Expected],
        token: Token | None,
        seen: int | None,
    ) -> Item:
        """One attempt of a create; with ``seen``, the number in ``ids`` is taken from a counter read at ``seen``."""
        counters = [counted.attribute for counted in self.declaration.children_of(entity)]
        put = building.create(self.model, entity, ids, attributes, counters, write_id=building.new_write_id())
        attribute_inputs.check_size(entity, put.item or {})
        ops = _expecting(self.model, [put, *building.counter_ops(self.declaration, [(entity, ids)], +1)], expected)
        if seen is not None:
            ops = building.numbered(self.model, entity, ids, ops, seen)
        try:
            applied = await self._apply(ops, token, {"ids": dict(ids)})
        except Refused as refused:
            if seen is not None:
                raise _numbering_refused(entity, ops, refused, seen) from None
            raise self._explain(put, refused.reasons[0].item, None) from None
        if applied.replayed is not None:
            return await self._read_back(entity, applied.replayed["ids"])
        if applied.item is not None:
            return applied.item
        # As a read returns it: a number or binary key attribute as its value, not the text keys are built from.
        return _as_read(self.model.stored(put.item or {}))

    async def _sequence(self, numbering: Numbering, ids: Ids) -> int:
        """The last number ``numbering``'s counter gave on the parent that ``ids`` name (0 for none); NotFound
        without the parent item."""
        parent = self.model.entity(numbering.parent)
        assert parent is not None  # the model's validation saw to it
        pids = numbering.parent_ids(parent, ids)
        self.guard.check_item(parent, pids)
        item = await self.store.get_item(self.model.key(parent, pids), self.ledger)
        if item is None:
            raise NotFound(f"{_describe(parent, pids)} does not exist", entity=parent.name)
        return int(item.get(numbering.counter) or 0)

    async def update(
        self,
        entity: Entity,
        ids: Ids,
        changes: Mapping[str, Any],
        expected_version: int | None,
        token: Token | None = None,
        rules: Sequence[Rule | Transition] | None = None,
    ) -> Item:
        """Set or remove attributes if the item is still at ``expected_version`` (None: at any) and meets ``rules``
        (by default, the entity's update rules; a transition's own); the item as it is after."""
        if rules is None:
            rules = self.declaration.rules_for(entity, "update")
        if self._must_read(entity, ids, changes):
            ids = await self._complete(entity, ids, all_ids=True)
        if building.needs_item(entity, ids, changes):
            # The other values of an index key it moves: read now, and the version condition keeps them so.
            ids = {**(self.model.ids_of(entity, await self._read_back(entity, ids)) or {}), **ids}
        write_id = building.new_write_id()
        attribute_inputs.check_size(entity, {**self.model.key(entity, ids), **changes})
        if copies.changes_source(self.model, entity, changes):
            # Marked in the same write: until every copy is rewritten, the parent says so.
            changes = {**changes, copies.PENDING: write_id}
        op = building.update(
            self.model, entity, ids, changes, expected_version, write_id=write_id, rules=rules, caller=self.caller
        )
        try:
            applied = await self._apply([op], token, {"ids": dict(ids)})
        except Refused as refused:
            old = refused.reasons[0].item
            # A retry of an update whose rewrite was cut short finds its own write there: it finishes the rewrite.
            await self._finish_copies(entity, ids, old)
            full = building.overfull(entity, changes, old) if old is not None else None
            if full is not None and building.version_of(old or {}) == expected_version:
                name, size = full
                spec = entity.declared[name]
                argument = set_field_names(name, spec)[0]
                raise BadUserInput(
                    f"{argument} would leave {field_name(name, spec)} with up to {size} members (those it holds"
                    f" counted too); it holds at most {spec.max_items}",
                    argument=argument,
                ) from None
            raise self._explain(op, old, expected_version, rules) from None
        # A transaction (the token's record goes with the update) returns no item: read back what it wrote.
        item = applied.item if applied.item is not None else await self._read_back(entity, ids)
        await self._finish_copies(entity, ids, item)
        return item

    async def delete(
        self,
        entity: Entity,
        ids: Ids,
        *,
        expected_version: int | None = None,
        cascade: bool = False,
        token: Token | None = None,
        cascaded: bool = False,
    ) -> dict[str, int]:
        """Delete an item; with ``cascade``, its members first, in bounded batches. How many of each went.

        The item goes last, by a write that requires its counters at 0, so a cascade that stops half way leaves
        the item and its remaining members, and running it again finishes the job. An item ``cascaded`` (a member
        its parent's cascade deletes) is held back neither by its delete rules nor by its parents' minimums.
        """
        try:
            ids = await self._complete(entity, ids)
        except NotFound:
            # A retry of a delete that went through: the item is gone, its token's record says how it went.
            replayed = await self._recorded(token)
            if replayed is None:
                raise
            return {name: int(count) for name, count in replayed["deleted"].items()}
        claim: str | None = None
        deleted: Counter[str] = Counter()
        if cascade and token is not None:
            # Several writes: a retry while this runs must not run a second cascade that counts only its share,
            # and a retry after this one failed half way counts what this one deleted too.
            claim = uuid.uuid4().hex
            replayed, partial = await self._claim(token, claim)
            if replayed is not None:
                return {name: int(count) for name, count in replayed["deleted"].items()}
            deleted.update(partial)
            self._claimed = (token, claim)
        try:
            return await self._delete(entity, ids, expected_version, cascade, token, claim, deleted, cascaded)
        except BaseException:
            if claim is not None and token is not None:
                await self._release(token, claim, deleted)
            raise

    async def _delete(
        self,
        entity: Entity,
        ids: Ids,
        expected_version: int | None,
        cascade: bool,
        token: Token | None,
        claim: str | None,
        deleted: Counter[str],
        cascaded: bool,
    ) -> dict[str, int]:
        missing_parents: set[tuple[str, str]] = set()
        rules = () if cascaded else self.declaration.rules_for(entity, "delete")
        for _ in range(CASCADE_ROUNDS):
            op = building.delete(
                self.model,
                entity,
                ids,
                expected_version=expected_version,
                empty_counters=[c.attribute for c in self.declaration.children_of(entity)],
                rules=rules,
                caller=self.caller,
            )
            counters = building.counter_ops(self.declaration, [(entity, ids)], -1, missing_parents, not cascaded)
            ops = [op, *counters]
            if token is None:
                ops += self._progress({entity.name: 1})  # a member of a claimed cascade, deleted with its own
            result = {"deleted": dict(deleted + Counter({entity.name: 1}))}
            try:
                applied = await self._apply(ops, token, result, claim)
            except Refused as refused:
                if _claim_lapsed(ops, refused):
                    raise _in_progress() from None
                gone = _missing_parents(self.model, ops, refused)
                if gone:
                    missing_parents |= gone
                    continue
                error = self._explain(op, _reason_of(ops, refused, "item"), expected_version, rules)
                if not (cascade and error.extensions.get("reason") == "HAS_CHILDREN"):
                    raise error from None
                await self._clear(entity, ids, deleted)
                continue
            if applied.replayed is not None:
                return {name: int(count) for name, count in applied.replayed["deleted"].items()}
            deleted[entity.name] += 1
            return dict(deleted)
        raise Conflict(
            f"{_describe(entity, ids)} kept gaining members while it was being deleted; try again",
            reason="HAS_CHILDREN",
        )

    # --- sending and explaining -----------------------------------------------------------------------------

    async def _apply(
        self, ops: Sequence[WriteOp], token: Token | None, result: Mapping[str, Any], claim: str | None = None
    ) -> _Applied:
        """Send ``ops`` (with the token's record); the earlier result if the token's mutation was applied before.

        Refusals other than the token's are explained here when they concern a parent, and raised as ``Refused``
        otherwise, for the caller who knows what it asked for.
        """
        sent = list(ops)
        if token is not None:
            sent.append(
                building.token_record(
                    self.declaration, self.caller, token.value, token.fingerprint, result, claim=claim
                )
            )
        self._check(sent)
        try:
            return _Applied(item=await self.store.write(sent, self.ledger))
        except Refused as refused:
            if len(sent) == 1:
                return _settle(sent[0], refused)
            if token is not None:
                recorded = refused.reasons[-1]
                if recorded.code == "ConditionalCheckFailed" and recorded.item is not None:
                    if recorded.item.get("fingerprint") != token.fingerprint:
                        raise Conflict(
                            "this client token was already used for a different mutation",
                            reason="TOKEN_REUSED",
                        ) from None
                    if "result" not in recorded.item:
                        raise _in_progress() from None  # another attempt claimed the token and is running
                    return _Applied(replayed=recorded.item["result"])
                refused = Refused(refused.reasons[:-1])
            for op, reason in zip(ops, refused.reasons, strict=True):
                if reason.code == "ConditionalCheckFailed" and copies.stale(op, reason.item):
                    raise Conflict(
                        f"{_describe(op.target.entity, op.target.ids)} changed while this write copied from it; "
                        "try again",
                        reason="CHANGED",
                    ) from None
                if reason.code == "ConditionalCheckFailed" and op.target.role == "parent" and reason.item:
                    raise _counter_refused(op, reason.item) from None
            for op, reason in zip(ops, refused.reasons, strict=True):
                if reason.code == "ConditionalCheckFailed" and op.target.role == "parent" and ops[0].action == "Put":
                    raise NotFound(
                        f"{_describe(op.target.entity, op.target.ids)} does not exist",
                        entity=op.target.entity.name,
                    ) from None
            raise refused from None

    def _progress(self, counts: Mapping[str, int]) -> list[WriteOp]:
        """The claim's count of what a transaction deletes, sent with it, while a claimed cascade runs."""
        if self._claimed is None or not counts:
            return []
        token, claim = self._claimed
        return [building.token_progress(self.declaration, self.caller, token.value, claim, counts)]

    async def _claim(self, token: Token, claim: str) -> tuple[dict[str, Any] | None, dict[str, int]]:
        """Claim ``token`` for this mutation: the recorded result when it was applied before, else what earlier
        attempts that failed half way did. UNAVAILABLE with outcome IN_PROGRESS while another request holds it,
        TOKEN_REUSED when it was another mutation's."""
        ids = building.token_ids(self.declaration, self.caller, token.value)
        earlier = await self.store.get_item(self.model.key(self.declaration.token, ids), self.ledger)
        partial: dict[str, int] = {}
        # An earlier attempt that released its claim, or whose claim lapsed (its process died), counted what it
        # deleted on the claim, transaction by transaction.
        if earlier is not None and "result" not in earlier and earlier.get("fingerprint") == token.fingerprint:
            partial = {name: int(count) for name, count in earlier.get("partial", {}).items()}
        op = building.token_claim(self.declaration, self.caller, token.value, token.fingerprint, claim, partial)
        try:
            await self.store.write([op], self.ledger)
        except Refused as refused:
            found = refused.reasons[0].item
            if found is None or found.get("claim") == claim:
                return None, partial  # our own claim, whose answer was lost
            if found.get("fingerprint") != token.fingerprint:
                raise Conflict(
                    "this client token was already used for a different mutation", reason="TOKEN_REUSED"
                ) from None
            if "result" in found:
                result: dict[str, Any] = found["result"]
                return result, partial
            raise _in_progress() from None
        return None, partial

    async def _release(self, token: Token, claim: str, deleted: Counter[str]) -> None:
        op = building.token_release(self.declaration, self.caller, token.value, token.fingerprint, claim, deleted)
        try:
            await self.store.write([op], self.ledger)
        except (Refused, GatewayError):
            log.warning("a cascade's client token could not be released; a retry runs once its claim expires")

    async def _recorded(self, token: Token | None) -> dict[str, Any] | None:
        """The result recorded for ``token``'s mutation, if it was applied; TOKEN_REUSED if it was another one."""
        if token is None:
            return None
        ids = building.token_ids(self.declaration, self.caller, token.value)
        record = await self.store.get_item(self.model.key(self.declaration.token, ids), self.ledger)
        if record is None or record.get("expiresAt", 0) < time.time():
            return None
        if record.get("fingerprint") != token.fingerprint:
            raise Conflict("this client token was already used for a different mutation", reason="TOKEN_REUSED")
        if "result" not in record:
            if record.get("released"):
                return None  # an attempt that failed half way: not applied
            raise _in_progress()
        result: dict[str, Any] = record["result"]
        return result

    def _explain(
        self, op: WriteOp, old: Item | None, expected_version: int | None, rules: Sequence[Rule | Transition] = ()
    ) -> GatewayError:
        """Why a write on the item itself was refused, from the item as it was."""
        entity, ids = op.target.entity, op.target.ids
        if op.action == "Put":
            version = building.version_of(old) if old else None
            return Conflict(f"{_describe(entity, ids)} already exists", reason="ALREADY_EXISTS", currentVersion=version)
        found = self.model.ids_of(entity, old) if old is not None else None
        if old is None or found is None or any(found.get(k) != v for k, v in ids.items()):
            return NotFound(f"{_describe(entity, ids)} does not exist", entity=entity.name)
        version = building.version_of(old)
        if expected_version is not None and version != expected_version:
            return Conflict(
                f"{_describe(entity, ids)} is at version {version}, not {expected_version}",
                reason="VERSION_MISMATCH",
                currentVersion=version,
            )
        for rule in rules:
            failed = next((c for c in rule.when if not c.holds(old, self.caller)), None)
            if failed is not None:
                return Conflict(
                    f"{_describe(entity, ids)} does not meet the rule {rule.name}: {failed}",
                    reason="RULE",
                    rule=rule.name,
                    currentVersion=version,
                )
        for counted in self.declaration.children_of(entity):
            count = old.get(counted.attribute)
            if count is None:
                return _not_counted(op, counted.attribute)
            if count != 0:
                return Conflict(
                    f"{_describe(entity, ids)} has {count} {counted.collection.entity.name} item(s); "
                    "pass cascade: true to delete them as well",
                    reason="HAS_CHILDREN",
                    currentVersion=version,
                )
        return Conflict(f"{_describe(entity, ids)} changed meanwhile", reason="CHANGED", currentVersion=version)

    def _check(self, ops: Sequence[WriteOp]) -> None:
        """Show the guard every item the write touches, with all the key attributes its ids give."""
        keys: list[Mapping[str, Any]] = []
        for op in ops:
            entity, ids = op.target.entity, op.target.ids
            if op.target.role in ("item", "member"):
                self.guard.check_shared_write(entity)
            if op.item is not None:
                keys.append(op.item)
            elif entity.all_id_fields <= ids.keys():
                keys.append(self.model.key_attributes(entity, ids))
            else:
                keys.append(op.key)
        self.guard.check_keys(keys)

    def _must_read(self, entity: Entity, ids: Ids, changes: Mapping[str, Any]) -> bool:
        """Whether an update reads the item before its one UpdateItem: to re-key an index from values neither the
        ids nor the changes give, or to show the guard a tenant that only the item's other keys name. Otherwise
        the version condition (and the rules') keeps the write safe on its own, with no read."""
        if building.needs_item(entity, ids, changes):
            return True
        late = set(self.guard.tenancy.grants) & (entity.all_id_fields - ids.keys())
        return bool(late) and not self.guard.principal.admin

    async def _read_back(self, entity: Entity, ids: Mapping[str, str]) -> Item:
        item = await self.store.get_item(self.model.key(entity, ids), self.ledger)
        if item is None:
            raise NotFound(f"{_describe(entity, ids)} does not exist", entity=entity.name)
        return item

    async def _complete(self, entity: Entity, ids: Ids, all_ids: bool = False) -> dict[str, str]:
        """The item's ids, with its parents' (or ``all_ids``); an item whose key lacks them (a ticket) is read.

        The write that follows requires the ids it learnt, so it does nothing if the item changed parent since.
        """
        wanted = set(entity.all_id_fields) if all_ids else set(entity.id_fields)
        wanted = wanted.union(*(counted.collection.parent_fields for counted in self.declaration.parents_of(entity)))
        if wanted <= ids.keys():
            return dict(ids)
        item = await self._read_back(entity, ids)
        found = self.model.ids_of(entity, item)
        # Another tenant's item is reported like a missing one: the caller learns nothing of what it cannot see.
        if found is None or not self.guard.visible(entity, item):
            raise NotFound(f"{_describe(entity, ids)} does not exist", entity=entity.name)
        return found

    # --- duplicated parent data -----------------------------------------------------------------------------

    async def _copied(self, entity: Entity, ids: Ids) -> tuple[dict[str, Any], list[_Expected]]:
        """The copies a new ``entity`` holds, read from its parents now, and what the create then requires of each
        parent: (parent, its ids, {source attribute: value})."""
        copied: dict[str, Any] = {}
        expected: list[_Expected] = []
        read: dict[tuple[tuple[str, str], ...], Item | None] = {}
        for copy in copies.of_member(self.model, entity):
            parent, pids = copy.collection.parent, copies.parent_ids(copy, ids)
            self.guard.check_item(parent, pids)
            key = self.model.key(parent, pids)
            at = tuple(sorted(key.items()))
            if at not in read:  # several copies from one parent: one read
                read[at] = await self.store.get_item(key, self.ledger)
            item = read[at]
            if item is None:
                raise NotFound(f"{_describe(parent, pids)} does not exist", entity=parent.name)
            copied[copy.attribute] = item.get(copy.source)
            expected.append((parent, pids, {copy.source: item.get(copy.source)}))
        return copied, expected

    async def _finish_copies(self, entity: Entity, ids: Ids, item: Item | None) -> None:
        """Rewrite the copies of a parent marked as having stale ones, then clear its mark."""
        if item is None or not isinstance(item.get(copies.PENDING), str):
            return
        found = self.model.ids_of(entity, item)
        if found is None:
            return
        for copy in copies.of_parent(self.model, entity):
            if not await self._rewrite(copy, found, item.get(copy.source)):
                return  # a later change marked the parent again: its own rewrite clears the mark
        clear = copies.clear_pending(self.model, entity, found, item[copies.PENDING])
        self._check([clear])
        # Refused: a later change marked the parent again since, and its own rewrite clears it.
        with contextlib.suppress(Refused):
            await self.store.write([clear], self.ledger)

    async def _rewrite(self, copy: Copy, ids: Ids, value: Any) -> bool:
        """Set every member's copy to ``value``, a page and a transaction at a time; members that hold it already
        are left as they are, so a rewrite run again writes only what an interrupted one did not. False when the
        parent changed again meanwhile, which leaves the rewrite to that change."""
        collection, member = copy.collection, copy.collection.entity
        progress = self.ledger.progress(f"{member.name}.{copy.attribute} of {_describe(collection.parent, ids)}")
        self.guard.check_query(collection, ids)
        stale: list[tuple[Item, Ids]] = []
        pages = self._member_pages(collection, ids)
        while True:
            page = await anext(pages, None)
            for item in page or ():
                found = self.model.ids_of(member, item)
                if found is not None and item.get(copy.attribute) != value:
                    stale.append((item, found))
            # Full transactions while pages come, the rest at the end.
            while len(stale) >= copies.BATCH or (page is None and stale):
                batch, stale = stale[: copies.BATCH], stale[copies.BATCH :]
                written = await self._rewrite_batch(copy, ids, value, batch)
                if written is None:
                    log.info("%s: a later change rewrites the copies", progress.name)
                    return False
                progress.items += written
                progress.batches += 1
                log.info("%s: %d copies rewritten so far", progress.name, progress.items)
            if page is None:
                break
        progress.done = True
        return True

    async def _member_pages(self, collection: Collection, ids: Ids) -> AsyncIterator[list[Item]]:
        """Every item in the members' range, a page at a time, shard after shard of a sharded collection."""
        for shard in range(collection.shards):
            request = queries.members_query(self.model, collection, ids, CASCADE_PAGE - 1, shard=shard)
            async for page in self.store.query_pages(request, self.ledger):
                yield page

    async def _rewrite_batch(self, copy: Copy, ids: Ids, value: Any, batch: list[tuple[Item, Ids]]) -> int | None:
        """One transaction; members deleted meanwhile are left out. How many were rewritten; None when the parent
        changed again since."""
        while batch:
            ops = copies.rewrites(self.model, copy, ids, value, batch)
            self._check(ops)
            try:
                await self.store.write(ops, self.ledger)
            except Refused as refused:
                if refused.reasons[0].code == "ConditionalCheckFailed":
                    return None
                gone = {
                    building.model_key(self.model, op.target.entity, op.target.ids)
                    for op, reason in zip(ops, refused.reasons, strict=True)
                    if op.target.role == "member" and reason.code == "ConditionalCheckFailed"
                }
                if not gone:
                    raise
                member = copy.collection.entity
                batch = [one for one in batch if building.model_key(self.model, member, one[1]) not in gone]
                continue
            return len(batch)
        return 0

    # --- cascades -------------------------------------------------------------------------------------------

    async def _clear(self, entity: Entity, ids: Ids, deleted: Counter[str]) -> None:
        """Delete every member of the item's counted collections, members of members first."""
        for counted in self.declaration.children_of(entity):
            collection = counted.collection
            member = collection.entity
            self.guard.check_query(collection, ids)
            async for page in self._member_pages(collection, ids):
                members: list[Member] = []
                for item in page:
                    found = self.model.ids_of(member, item)
                    if found is not None:
                        members.append((member, found))
                if self.declaration.children_of(member):
                    for one in members:
                        # A member someone else deleted meanwhile is simply done.
                        with contextlib.suppress(NotFound):
                            deleted.update(await self.delete(member, one[1], cascade=True, cascaded=True))
                    continue
                for batch in building.member_batches(self.declaration, members, room=1):
                    await self._delete_members(batch, deleted)

    async def _delete_members(self, members: list[Member], deleted: Counter[str]) -> None:
        """One batch; members already gone and parents that never existed are left out and the rest sent again."""
        skip: set[tuple[str, str]] = set()
        while members:
            ops = building.member_deletes(self.declaration, members, skip)
            ops += self._progress(Counter(entity.name for entity, _ in members))
            self._check(ops)
            try:
                await self.store.write(ops, self.ledger)
            except Refused as refused:
                if _claim_lapsed(ops, refused):
                    raise _in_progress() from None
                gone = _missing_parents(self.model, ops, refused)
                for op, reason in zip(ops, refused.reasons, strict=True):
                    if reason.code != "ConditionalCheckFailed":
                        continue
                    if op.target.role == "member" and reason.item is None:
                        members = [m for m in members if m[1] != op.target.ids]
                    elif op.target.role == "parent" and reason.item is not None:
                        raise _not_counted(op) from None
                    elif op.target.role == "member":
                        raise Conflict(f"{_describe(op.target.entity, op.target.ids)} changed meanwhile") from None
                skip |= gone
                continue
            deleted.update(entity.name for entity, _ in members)
            return


class _Outnumbered(Exception):
    """A numbered create lost its number to another create: the counter holds ``seen`` now."""

    def __init__(self, seen: int) -> None:
        super().__init__(seen)
        self.seen = seen


def _numbering_refused(entity: Entity, ops: Sequence[WriteOp], refused: Refused, seen: int) -> Exception:
    """Why a numbered create's transaction was refused: its number was taken (``_Outnumbered``, to try the next),
    its parent is gone, the parent's member counter is missing, or an item has that number already."""
    numbering = entity.minted
    assert isinstance(numbering, Numbering)
    at = next(i for i, op in enumerate(ops) if op.target.role == "sequence")
    op, reason = ops[at], refused.reasons[at]
    if reason.code == "ConditionalCheckFailed":
        if reason.item is None:
            return NotFound(f"{_describe(op.target.entity, op.target.ids)} does not exist", entity=numbering.parent)
        now = int(reason.item.get(numbering.counter) or 0)
        if now != seen:
            return _Outnumbered(now)
        # The counter held its number, so the condition that failed is the member counter's it was joined to.
        others = [name for name in op.names.values() if name not in (numbering.counter, *op.key)]
        return _counter_refused(op, reason.item, ", ".join(others))
    put = ops[0]
    if refused.reasons[0].code != "ConditionalCheckFailed":
        return refused
    return Conflict(
        f"{_describe(entity, put.target.ids)} already exists: {numbering.parent}.{numbering.counter} is behind the"
        " items numbered from it (another tool wrote them); set it to the highest number taken",
        reason="ALREADY_EXISTS",
    )


def _claim_lapsed(ops: Sequence[WriteOp], refused: Refused) -> bool:
    """Whether the claim a transaction counted its progress on was no longer this attempt's: it lapsed, and another
    attempt of the same mutation took it over."""
    return any(
        op.target.role == "token" and reason.code == "ConditionalCheckFailed"
        for op, reason in zip(ops, refused.reasons, strict=False)
    )


def _in_progress() -> Unavailable:
    return Unavailable(
        "the mutation sent with this client token is still running: send it again shortly for its result",
        outcome="IN_PROGRESS",
    )


def _settle(op: WriteOp, refused: Refused) -> _Applied:
    """A refused single write that was applied by an attempt whose answer was lost is a success; an unknown
    outcome is UNAVAILABLE, never a refusal; anything else is the refusal, raised again."""
    outcome = building.outcome_of(op, refused)
    if outcome == "applied":
        return _Applied(item=refused.reasons[0].item)
    if outcome == "unknown":
        log.warning(
            "%s: DynamoDB's answer was lost and the item changed since; whether the write was applied is unknown",
            _describe(op.target.entity, op.target.ids),
        )
        raise Unavailable(
            "DynamoDB's answer to this write was lost and the item has changed since, so whether it was applied "
            "is unknown: read it back, or send mutations with a clientToken to retry them safely",
            outcome="UNKNOWN",
        ) from None
    raise refused


def _reason_of(ops: Sequence[WriteOp], refused: Refused, role: str) -> Item | None:
    for op, reason in zip(ops, refused.reasons, strict=False):
        if op.target.role == role:
            return reason.item
    return None


def _missing_parents(model: Any, ops: Sequence[WriteOp], refused: Refused) -> set[tuple[str, str]]:
    """Parents whose counter update was refused because the parent item does not exist."""
    return {
        building.model_key(model, op.target.entity, op.target.ids)
        for op, reason in zip(ops, refused.reasons, strict=False)
        if op.target.role == "parent" and reason.code == "ConditionalCheckFailed" and reason.item is None
    }


def _counter_refused(op: WriteOp, item: Item, attribute: str | None = None) -> Conflict:
    """Why a counter update was refused on a parent that exists: a counter's bound (the design's rule), or a
    counter never set."""
    broken = building.broken_bound(op, item)
    if broken is None:
        return _not_counted(op, attribute)
    rule, counter, count, bound = broken
    limit = "at most" if op.deltas[counter] > 0 else "at least"
    return Conflict(
        f"{_describe(op.target.entity, op.target.ids)} has {counter} {count}, and the rule {rule} keeps it"
        f" {limit} {bound}",
        reason="RULE",
        rule=rule,
    )


def _not_counted(op: WriteOp, attribute: str | None = None) -> Conflict:
    what = attribute or ", ".join(name for name in op.names.values() if name != "version")
    return Conflict(
        f"{_describe(op.target.entity, op.target.ids)} has no {what} counter yet: "
        "run `tablegraph recount` once on a table that another tool wrote",
        reason="NOT_COUNTED",
    )


def _describe(entity: Entity, ids: Mapping[str, str]) -> str:
    return f"{entity.name} " + "/".join(repr(ids[name]) for name in entity.id_fields if name in ids)


def _as_read(item: Item) -> Item:
    """The item as a read returns it: numbers as Decimal, as the read path's types expect."""
    return {name: _decimal(value) for name, value in item.items()}


def _decimal(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, dict):
        return {k: _decimal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decimal(v) for v in value]
    return value


_Expected = tuple[Entity, dict[str, str], dict[str, Any]]
"""A parent, its ids, and the values a new member copied from it."""


def _expecting(model: Model, ops: list[WriteOp], expected: list[_Expected]) -> list[WriteOp]:
    """A create's writes, each parent required to still hold what the new item copied from it: in the parent's
    counter update when the create moves one (a transaction touches an item once), else in a check of its own."""
    out = list(ops)
    for parent, pids, values in expected:
        key = model.key(parent, pids)
        at = next((i for i, op in enumerate(out) if op.target.role == "parent" and op.key == key), None)
        if at is None:
            out.append(copies.check_parent(model, parent, pids, values))
        else:
            out[at] = copies.expecting(out[at], values)
    return out
