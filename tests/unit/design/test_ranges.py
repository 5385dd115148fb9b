"""A collection's range (``Collection.range``): refused when the model is built unless a range of the field's values
is one stretch of keys, and turned into the Query's key condition."""

from __future__ import annotations

import pytest

from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Model
from gateway.errors import BadUserInput
from gateway.execution.queries import KeyRange, Window, key_range, members_query

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")
CUSTOMER = Entity("Customer", {None: KeyShape.of("c#{customerId}", "c#{customerId}")})


def _line(gsi1_sk: str) -> Entity:
    return Entity(
        "Line",
        {None: KeyShape.of("o#{orderId}", "p#{productId}"), "GSI1": KeyShape.of("c#{customerId}", gsi1_sk)},
        {"Quantity": Attribute("N", text=True)},
    )


def _model(gsi1_sk: str, range_: str, **options: object) -> Model:
    line = _line(gsi1_sk)
    collection = Collection("Customer.lines", CUSTOMER, line, "GSI1", range=range_, **options)  # type: ignore[arg-type]
    return Model("t", (TABLE, GSI1), (CUSTOMER, line), collections=(collection,))


def test_a_range_on_the_field_that_ends_the_sort_key_is_accepted() -> None:
    assert _model("p#{orderedAt}", "orderedAt").collections[0].range == "orderedAt"
    assert _model("{orderedAt}", "orderedAt").collections[0].range == "orderedAt"


@pytest.mark.parametrize(
    ("gsi1_sk", "range_", "message"),
    [
        ("p#{orderedAt}", "placedAt", "is not a field of the members' sort key 'p#{orderedAt}'"),
        ("p#{orderedAt}#{productId}", "orderedAt", "must end with {orderedAt}"),
        ("p#{lineNo:05}#x", "lineNo", "must end with {lineNo} (or a zero-padded {lineNo:05}"),
        ("p#{orderedAt}X", "orderedAt", "must end with {orderedAt}"),
        ("{productId}#{orderedAt}", "orderedAt", "['productId'] come before it"),
        ("p#{first}", "first", "named like a connection argument"),
    ],
)
def test_a_range_that_is_no_stretch_of_keys_is_refused(gsi1_sk: str, range_: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        _model(gsi1_sk, range_)
    assert "Customer.lines: range=" in str(refused.value) and message in str(refused.value)


def test_a_range_after_levels_is_read_under_them_and_refused_without_them() -> None:
    # A device state log's GSI2: begins_with(State#Date, "WARNING4#2020-04-27"), the state a level, the day a range.
    model = _model("p#{productId}#{orderedAt}", "orderedAt", levels=("productId",))
    collection = model.collections[0]
    ranged = key_range({"productId": "9", "orderedAt": {"beginsWith": "2020-06"}}, collection)
    ids = {"customerId": "1", "productId": "9"}
    request = members_query(model, collection, ids, 10, window=Window(10, range=ranged))
    assert request.sort == ("GSI1SK", "begins_with", "p#9#2020-06")
    with pytest.raises(BadUserInput, match="orderedAt is read within productId: give productId as well"):
        key_range({"orderedAt": {"beginsWith": "2020-06"}}, collection)


@pytest.mark.parametrize(
    ("given", "condition", "end"),
    [
        ({"between": ["2020-06-01", "2020-06-15"]}, ("GSI1SK", "between", "p#2020-06-01"), "p#2020-06-15"),
        ({"gte": "2020-06"}, ("GSI1SK", "between", "p#2020-06"), "p$"),
        ({"lte": "2020-06"}, ("GSI1SK", "between", "p#"), "p#2020-06"),
        ({"beginsWith": "2020-06"}, ("GSI1SK", "begins_with", "p#2020-06"), None),
    ],
)
def test_a_range_is_the_key_condition_kept_under_the_keys_literal_head(
    given: dict[str, object], condition: tuple[str, str, str], end: str | None
) -> None:
    model = _model("p#{orderedAt}", "orderedAt")
    collection = model.collections[0]
    ranged = key_range({"orderedAt": given}, collection)
    request = members_query(model, collection, {"customerId": "1"}, 10, window=Window(10, range=ranged))
    assert (request.sort, request.sort_end, request.filter) == (condition, end, None)


def test_a_range_of_a_zero_padded_number_is_read_between_its_padded_keys() -> None:
    """Regression: a range on a padded number was refused, though its keys sort as its values do; its bounds are now
    written as the keys write them, and text that is no number is refused before any request."""
    model = _model("p#{lineNo:05}", "lineNo")
    collection = model.collections[0]
    for given, condition, end in [
        ({"between": ["7", "120"]}, ("GSI1SK", "between", "p#00007"), "p#00120"),
        ({"gte": "42"}, ("GSI1SK", "between", "p#00042"), "p$"),
        ({"lte": "42"}, ("GSI1SK", "between", "p#"), "p#00042"),
    ]:
        ranged = key_range({"lineNo": given}, collection)
        request = members_query(model, collection, {"customerId": "1"}, 10, window=Window(10, range=ranged))
        assert (request.sort, request.sort_end) == (condition, end)
    with pytest.raises(BadUserInput, match="must be a whole number"):
        key_range({"lineNo": {"gte": "seven"}}, collection)


def test_a_bare_field_sort_key_takes_open_bounds_as_plain_comparisons() -> None:
    assert KeyRange(low="2020").condition("SK", "") == (("SK", ">=", "2020"), None)
    assert KeyRange(high="2020").condition("SK", "") == (("SK", "<=", "2020"), None)
    assert KeyRange(low="a", high="b").holds("p#a1", "p#") and not KeyRange(low="a", high="b").holds("p#b1", "p#")
    assert not KeyRange(prefix="20").holds("i#2020", "p#")


def test_no_range_argument_is_no_range_and_a_collection_without_range_ignores_one() -> None:
    model = _model("p#{orderedAt}", "orderedAt")
    assert key_range({}, model.collections[0]) is None
    plain = Collection("Customer.lines", CUSTOMER, _line("p#{orderedAt}"), "GSI1")
    assert key_range({"orderedAt": {"gte": "x"}}, plain) is None
    with pytest.raises(BadUserInput):
        key_range({"orderedAt": {"between": ["b", "a"]}}, model.collections[0])
