"""Generated single-table designs, written as items and drafted as ``init`` drafts a table's sample: the draft
recognises every item as an entity of its own, one drafted entity per generated one."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.dynamo.sampling import KeySchema
from gateway.server.declaration_file import parse
from gateway.server.drafts import draft, groups_of
from tests.support.designs_gen import Design, Item, ambiguities, data, designs


@st.composite
def designs_with_items(draw: st.DrawFn) -> tuple[Design, list[tuple[str, Item]]]:
    design = draw(designs(today=True))
    return design, draw(data(design))


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(designs_with_items())
def test_a_draft_recognises_each_generated_item_as_its_own_entity(drawn: tuple[Design, list[tuple[str, Item]]]) -> None:
    design, items = drawn
    if ambiguities(design):
        return
    keys = KeySchema(*design.table_keys, indexes=dict(design.indexes))
    result = draft(groups_of([item for _, item in items], keys), keys, "generated")
    model = parse(result.text, "draft").model
    drafted: dict[str, str] = {}
    for entity, item in items:
        found = model.recognise(item)
        assert found is not None, (entity, item, result.text)
        assert drafted.setdefault(entity, found[0].name) == found[0].name, (entity, item, result.text)
    assert len(set(drafted.values())) == len(drafted), result.text
