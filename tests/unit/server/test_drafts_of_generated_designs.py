"""Generated single-table designs, written as items and drafted as ``init`` drafts a table's sample, over the
generator's whole range (other separators, prefixes glued to a field, padded numbers, dates, discriminators on some
types, sparse keys, ambiguous designs): the draft recognises every item as an entity of its own, one drafted entity
per generated one, or says in the file it writes what the sample could not tell; it never recognises an item as
another type's entity without saying so."""

from __future__ import annotations

import re
from itertools import combinations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.dynamo.sampling import KeySchema
from gateway.server.declaration_file import DeclarationFileError, parse
from gateway.server.drafts import draft, groups_of
from tests.support.designs_gen import Design, Item, ambiguities, data, designs

_CHECK = re.compile(r"^# Check (\w+):", re.M)


@st.composite
def designs_with_items(draw: st.DrawFn) -> tuple[Design, list[tuple[str, Item]]]:
    design = draw(designs())
    return design, draw(data(design))


def _drafted(items: list[tuple[str, Item]], keys: KeySchema) -> str:
    return draft(groups_of([item for _, item in items], keys), keys, "generated").text


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(designs_with_items())
def test_a_draft_recognises_each_generated_item_as_its_own_entity_or_says_what_to_check(
    drawn: tuple[Design, list[tuple[str, Item]]],
) -> None:
    design, items = drawn
    keys = KeySchema(*design.table_keys, indexes=dict(design.indexes))
    text = _drafted(items, keys)
    try:
        model = parse(text, "the draft").model
    except DeclarationFileError as error:
        # Refused when built, never served wrong; and the file says why, naming the types and what to check.
        assert "# This draft does not build yet" in text and f"# {error}".splitlines()[0] in text, text
        return
    checked = set(_CHECK.findall(text))
    drafted: dict[str, str] = {}
    for entity, item in items:
        found = model.recognise(item)
        assert found is not None or checked, (entity, item, text)
        if found is None or found[0].name in checked:
            continue
        assert drafted.setdefault(entity, found[0].name) == found[0].name, (entity, item, text)
    # Two types whose items can be the same item (the design is ambiguous) look alike in any sample: those alone may
    # be drafted as one.
    alike = {frozenset((a, b)) for a, b, _ in ambiguities(design)}
    for a, b in combinations(sorted(drafted), 2):
        assert drafted[a] != drafted[b] or frozenset((a, b)) in alike, (a, b, text)


def test_a_draft_reads_glued_words_other_separators_and_a_type_attribute_some_items_hold() -> None:
    keys = KeySchema("PK", "SK", indexes={})
    items = [
        {"PK": "ord00042", "SK": "ord00042", "EntityType": "order"},
        {"PK": "ord00043", "SK": "ord00043", "EntityType": "order"},
        {"PK": "ord00042", "SK": "shp2026-01-05|x-1", "title": "one"},
        {"PK": "ord00042", "SK": "shp2026-01-07|y-2", "title": "two"},
        {"PK": "ord00043", "SK": "shp2026-01-05|z-3", "title": "three"},
    ]
    text = _drafted([("", item) for item in items], keys)
    model = parse(text, "draft").model
    shapes = {entity.name: (entity.keys[None].pk.pattern, entity.keys[None].sk.pattern) for entity in model.entities}
    del shapes["MutationToken"]  # the gateway's own, in every model
    assert shapes == {"Order": ("ord{orderId}", "ord{orderId}"), "Shp": ("ord{orderId}", "shp{shpedAt}|{shpKey}")}
    recognised = [found[0].name if (found := model.recognise(item)) else None for item in items]
    assert recognised == ["Order", "Order", "Shp", "Shp", "Shp"], text
