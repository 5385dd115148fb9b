"""Union connections (``Collection(name, parent, (kind, kind, ...))``): what one Query of a partition can serve as
several types is accepted, and what it would serve wrong is refused when the model is built, naming the fix."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.design.model import Attribute, Collection, Copy, Entity, Index, KeyShape, Model
from gateway.execution import queries

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")
ORDER = Entity("Order", {None: KeyShape.of("o#{orderId}", "o#{orderId}")}, partition=True)
LINE = Entity("Line", {None: KeyShape.of("o#{orderId}", "p#{productId}")}, {"Quantity": "N", "Note": "S"})
INVOICE = Entity("Invoice", {None: KeyShape.of("o#{orderId}", "i#{invoiceId}")}, {"Amount": "N"})
PAYMENT = Entity("Payment", {None: KeyShape.of("o#{orderId}", "pmn#{paymentId}")}, {"Amount": "N"})
KINDS = (LINE, INVOICE, PAYMENT)


def _model(*collections: Collection, entities: tuple[Entity, ...] = (ORDER, *KINDS), **options: Any) -> Model:
    return Model("t", (TABLE, GSI1), entities, collections=collections, **options)


def test_a_union_of_every_kind_in_the_partition_reads_it_whole_in_one_query() -> None:
    details = Collection("Order.details", ORDER, KINDS)
    model = _model(details)
    assert details.is_union and details.members == KINDS and details.union_name == "OrderDetail"
    request = queries.members_query(model, details, {"orderId": "7"}, 10)
    assert (request.partition, request.sort, request.limit) == (("PK", "o#7"), None, 11)
    assert not model.parent_sorts_with_members(details)


def test_the_query_keeps_to_the_prefix_the_kinds_share() -> None:
    board = Entity("Board", {None: KeyShape.of("B#{boardId}", "META")}, {"title": "S"})
    card = Entity("Card", {None: KeyShape.of("B#{boardId}", "ITEM#C#{cardId}")})
    note = Entity("Note", {None: KeyShape.of("B#{boardId}", "ITEM#NOTE#{noteId}")})
    pinned = Collection("Board.pinned", board, (card, note), union="Pin")
    model = _model(pinned, entities=(board, card, note))
    request = queries.members_query(model, pinned, {"boardId": "1"}, 5)
    assert request.sort == ("SK", "begins_with", "ITEM#")
    assert pinned.union_name == "Pin"
    assert queries.binding(pinned, {"boardId": "1"}) == "Board.pinned\x00B#1\x00ITEM#"


def test_a_union_in_an_index_reads_the_index_and_resumes_by_both_keys() -> None:
    group = Entity("Group", {None: KeyShape.of("G#{groupId}", "G#{groupId}")})
    post = Entity(
        "Post",
        {None: KeyShape.of("P#{postId}", "P#{postId}"), "GSI1": KeyShape.of("G#{groupId}", "F#P#{postId}")},
    )
    poll = Entity(
        "Poll",
        {None: KeyShape.of("Q#{pollId}", "Q#{pollId}"), "GSI1": KeyShape.of("G#{groupId}", "F#Q#{pollId}")},
    )
    feed = Collection("Group.feed", group, (post, poll), "GSI1", ascending=False)
    model = _model(feed, entities=(group, post, poll))
    request = queries.members_query(model, feed, {"groupId": "g"}, 20)
    assert (request.index, request.partition, request.sort) == (
        "GSI1",
        ("GSI1PK", "G#g"),
        ("GSI1SK", "begins_with", "F#"),
    )
    assert not request.ascending
    assert model.position_fields(feed) == ["PK", "SK", "GSI1PK", "GSI1SK"]


def test_a_kind_left_out_whose_items_sort_among_the_others_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Order\.details: Payment's items .* add Payment to the union's members"):
        _model(Collection("Order.details", ORDER, (LINE, INVOICE)))


def test_a_kind_outside_the_range_read_may_be_left_out() -> None:
    card = Entity("Card", {None: KeyShape.of("o#{orderId}", "x#c#{cardId}")})
    note = Entity("Note", {None: KeyShape.of("o#{orderId}", "x#n#{noteId}")})
    details = Collection("Order.extras", ORDER, (card, note))
    model = _model(details, entities=(ORDER, *KINDS, card, note))
    assert queries.members_query(model, details, {"orderId": "7"}, 1).sort == ("SK", "begins_with", "x#")


def test_the_parents_own_item_in_the_range_is_refused() -> None:
    customer = Entity("Customer", {None: KeyShape.of("c#{customerId}", "c#{customerId}")}, {"Name": "S"})
    address = Entity("Address", {None: KeyShape.of("c#{customerId}", "a#{addressId}")})
    card = Entity("Card", {None: KeyShape.of("c#{customerId}", "card#{cardId}")})
    with pytest.raises(ValueError, match=r"Customer\.wallet: Customer's items .* add Customer to the union"):
        _model(Collection("Customer.wallet", customer, (address, card)), entities=(customer, address, card))


def test_kinds_that_could_be_mistaken_for_each_other_need_a_discriminator() -> None:
    photo = Entity("Photo", {None: KeyShape.of("o#{orderId}", "f#{photoId}")})
    scan = Entity("Scan", {None: KeyShape.of("o#{orderId}", "f#{scanId}")})
    with pytest.raises(ValueError, match=r"Photo and Scan have key shapes that can be mistaken .* discriminator"):
        _model(Collection("Order.files", ORDER, (photo, scan)), entities=(ORDER, photo, scan))
    told = [Entity(one.name, one.keys, discriminator=("kind", one.name)) for one in (photo, scan)]
    model = _model(Collection("Order.files", ORDER, tuple(told)), entities=(ORDER, *told))
    assert model.recognise({"PK": "o#1", "SK": "f#9", "kind": "Scan"}) == (told[1], {"orderId": "1", "scanId": "9"})


@pytest.mark.parametrize(
    ("options", "dropped"),
    [
        ({"target": INVOICE}, "target"),
        ({"levels": ("productId",)}, "levels"),
        ({"filters": ("Amount",)}, "filters"),
        ({"range": "productId"}, "range"),
        ({"shape": LINE.primary}, "shape"),
        ({"counter": "Lines"}, "counter"),
    ],
)
def test_options_that_read_or_count_one_kind_are_refused_on_a_union(options: dict[str, Any], dropped: str) -> None:
    with pytest.raises(
        ValueError, match=rf"Order\.details: a union connection of Line, Invoice, Payment .* {dropped}="
    ):
        Collection("Order.details", ORDER, KINDS, **options)


@pytest.mark.parametrize("members", [(LINE,), (LINE, LINE, INVOICE)])
def test_a_union_lists_two_kinds_or_more_once_each(members: tuple[Entity, ...]) -> None:
    with pytest.raises(ValueError, match="two entities or more, each once"):
        Collection("Order.details", ORDER, members)


def test_a_kind_of_another_partition_is_refused() -> None:
    stock = Entity("Stock", {None: KeyShape.of("w#{orderId}", "s#{stockId}")})
    with pytest.raises(ValueError, match=r"Stock's partition key 'w#\{orderId\}' is not Line's 'o#\{orderId\}'"):
        _model(Collection("Order.details", ORDER, (LINE, stock)), entities=(ORDER, LINE, stock))


def test_a_kind_without_keys_in_the_index_is_refused() -> None:
    indexed = Entity(
        "Indexed",
        {None: KeyShape.of("o#{orderId}", "x#{xId}"), "GSI1": KeyShape.of("o#{orderId}", "x#{xId}")},
    )
    with pytest.raises(ValueError, match=r"Order\.details: Line has no keys in index 'GSI1'"):
        _model(Collection("Order.details", ORDER, (indexed, LINE), "GSI1"), entities=(ORDER, LINE, indexed))


def test_a_partition_entity_is_no_kind() -> None:
    other = Entity("Other", {None: KeyShape.of("o#{orderId}", "z")}, partition=True)
    with pytest.raises(ValueError, match=r"Order\.details: Other has no items to list"):
        _model(Collection("Order.details", ORDER, (other, *KINDS)), entities=(ORDER, other, *KINDS))


def test_a_union_named_like_an_entity_is_refused() -> None:
    with pytest.raises(ValueError, match="its union's type name 'Line' is an entity's: give union="):
        _model(Collection("Order.details", ORDER, KINDS, union="Line"))


def test_union_is_only_for_unions() -> None:
    with pytest.raises(ValueError, match=r"Order\.lines: union= names the node type of a union connection"):
        Collection("Order.lines", ORDER, LINE, union="OrderLine")


def test_copies_through_a_union_are_refused() -> None:
    parent = Entity("Order2", {None: KeyShape.of("o#{orderId}", "META")}, {"Note": "S"})
    lined = Entity("Lined", {None: KeyShape.of("o#{orderId}", "x#l#{lineId}")}, {"Note": Attribute("S")})
    billed = Entity("Billed", {None: KeyShape.of("o#{orderId}", "x#b#{billId}")}, {"Note": Attribute("S")})
    details = Collection("Order2.details", parent, (lined, billed))
    with pytest.raises(ValueError, match=r"Order2\.details: a union connection keeps no copies"):
        _model(details, entities=(parent, lined, billed), copies=(Copy(details, "Note", "Note"),))


def test_a_sharded_partition_is_refused() -> None:
    parent = Entity("Feed", {None: KeyShape.of("F#{feedId}", "META")})
    a = Entity("Post", {None: KeyShape.of("F#{feedId}#{postId%4}", "P#{postId}")})
    b = Entity("Like", {None: KeyShape.of("F#{feedId}#{postId%4}", "L#{postId}#{likeId}")})
    with pytest.raises(ValueError, match="is sharded; a union reads one partition"):
        _model(Collection("Feed.activity", parent, (a, b)), entities=(parent, a, b))
