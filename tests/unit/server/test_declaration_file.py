"""A declaration file's errors name the file, the line and the key; what it declares is what the model gets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from gateway.design.model import Collection, Index, Numbering
from gateway.server.cli import main
from gateway.server.declaration_file import SCHEMA_PATH, DeclarationFileError, load_file, parse
from tests.support.paths import ROOT

SMALL = """\
table: shop
keys: {pk: PK, sk: SK}
indexes:
  GSI1: {pk: GSI1PK, sk: GSI1SK}
shapes:
  Address:
    fields: {street: S, zip: {type: S, max_length: 10}}
entities:
  Customer:
    keys:
      table: {pk: "c#{customerId}", sk: "c#{customerId}"}
    discriminator: {attribute: EntityType, value: customer}
    attributes:
      email: {type: S, required: true}
      address: {type: M, shape: Address}
      tags: SS
  Order:
    keys:
      table: {pk: "o#{orderId}", sk: "o#{orderId}"}
      GSI1: {pk: "c#{customerId}", sk: "o#{orderDate}", sparse: true}
    discriminator: {attribute: EntityType, value: order}
    attributes:
      orderDate: {type: DATE, required: true}
      total: {type: N, text: true}
collections:
  Customer.orders: {parent: Customer, member: Order, index: GSI1, ascending: false}
links:
  Order.buyer: {source: Order, target: Customer}
tenancy: {customerId: customers}
"""


def _error(text: str, name: str = "shop.yaml") -> str:
    with pytest.raises(DeclarationFileError) as raised:
        parse(text, name)
    return str(raised.value)


def test_a_file_declares_entities_keys_attributes_collections_links_and_tenancy() -> None:
    declaration = parse(SMALL, "shop.yaml")
    order = declaration.entity("Order")
    assert order.keys["GSI1"].sparse and order.keys["GSI1"].sk.pattern == "o#{orderDate}"
    assert order.discriminator == ("EntityType", "order")
    assert order.declared["total"].text
    customer = declaration.entity("Customer")
    shape = customer.declared["address"].shape
    assert shape is not None and shape.name == "Address" and shape.declared["zip"].max_length == 10
    assert customer.declared["tags"].type == "SS"
    assert declaration.model.relations["Customer.orders"].index == "GSI1"  # type: ignore[union-attr]
    assert declaration.model.relations["Order.buyer"].target is customer
    assert declaration.tenancy.grants == {"customerId": "customers"}


def test_the_published_schema_accepts_what_the_loader_accepts() -> None:
    jsonschema.validate(yaml.safe_load(SMALL), json.loads(SCHEMA_PATH.read_text()))


def test_an_unknown_key_is_named_with_its_line() -> None:
    broken = SMALL.replace("      tags: SS\n", "      tags: SS\n    colour: blue\n")
    assert _error(broken) == (
        "shop.yaml:17: entities.Customer.colour: unknown key; expected one of attributes, constants, description,"
        " discriminator, internal, keys, mint, minted, partition, variants, verbs"
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(broken), json.loads(SCHEMA_PATH.read_text()))


def test_an_unknown_index_is_named_with_its_line() -> None:
    message = _error(SMALL.replace('      GSI1: {pk: "c#', '      GSI9: {pk: "c#'))
    assert message == "shop.yaml:20: entities.Order.keys.GSI9: no index named 'GSI9'; declared: table, GSI1"


def test_a_refusal_of_the_model_is_named_with_the_line_of_what_it_refuses() -> None:
    message = _error(SMALL.replace("member: Order, index: GSI1,", "member: Order,"))
    assert message.startswith("shop.yaml:26: collections.Customer.orders: Customer.orders: the partition key")


def test_a_wrong_type_is_named_with_its_line() -> None:
    assert _error(SMALL.replace("tags: SS", "tags: XX")) == (
        "shop.yaml:16: entities.Customer.attributes.tags.type: no type 'XX'; one of S, N, INT, BOOL, L, M, DATE, SS,"
        " NS, BS, JSON"
    )
    assert _error(SMALL.replace("sparse: true", "sparse: often")) == (
        "shop.yaml:20: entities.Order.keys.GSI1.sparse: expected true or false, found text"
    )


def test_text_that_is_not_yaml_is_named_with_its_line() -> None:
    assert _error("table: shop\nkeys: {pk: PK\n").startswith("shop.yaml:3: not YAML:")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DeclarationFileError, match=r"nowhere\.yaml: cannot read the declaration"):
        load_file(tmp_path / "nowhere.yaml")


def test_a_json_file_is_a_declaration_too(tmp_path: Path) -> None:
    path = tmp_path / "shop.json"
    path.write_text(json.dumps(yaml.safe_load(SMALL)))
    assert [entity.name for entity in load_file(path).model.entities] == ["Customer", "Order", "MutationToken"]


def test_the_example_in_the_documentation_builds_and_follows_the_schema() -> None:
    text = (ROOT / "docs" / "declarations.md").read_text()
    example = re.search(r"```yaml\n(.*?)```", text, re.S)
    assert example is not None
    jsonschema.validate(yaml.safe_load(example.group(1)), json.loads(SCHEMA_PATH.read_text()))
    declaration = parse(example.group(1), "declarations.md")
    assert declaration.model.copies[0].collection.name == "Customer.orders"


def test_a_command_given_a_broken_file_says_where_and_exits_as_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "shop.yaml"
    path.write_text(SMALL.replace("tags: SS", "tags: XX"))
    assert main(["export-schema", "--model", str(path)]) == 2
    assert f"{path}:16: entities.Customer.attributes.tags.type: no type 'XX'" in capsys.readouterr().err


# An order that is only a partition its lines share, lines read by a range of dates, an invoice found by its id alone.
PARTS = """\
table: shop
keys: {pk: PK, sk: SK}
indexes:
  GSI1: {pk: GSI1PK, sk: GSI1SK}
entities:
  Customer:
    keys:
      table: {pk: "c#{customerId}", sk: "c#{customerId}"}
  Order:
    keys:
      table: {pk: "o#{orderId}", sk: "o#{orderId}"}
    partition: true
  Invoice:
    keys:
      table: {pk: "o#{orderId}", sk: "i#{invoiceId}"}
      GSI1: {pk: "i#{invoiceId}", sk: "i#{invoiceId}"}
  OrderItem:
    keys:
      table: {pk: "o#{orderId}", sk: "p#{productId}"}
      GSI1: {pk: "c#{customerId}", sk: "p#{orderedAt}"}
    attributes:
      quantity: INT
collections:
  Order.items: {parent: Order, member: OrderItem}
  Customer.orderedProducts: {parent: Customer, member: OrderItem, index: GSI1, range: orderedAt}
lookups:
  invoiceById: {entity: Invoice, index: GSI1, description: An invoice by its id alone.}
"""


def _parts_error(text: str) -> str:
    with pytest.raises(DeclarationFileError) as raised:
        parse(text, "parts.yaml")
    return str(raised.value)


def test_a_file_declares_partition_entities_ranges_and_lookups() -> None:
    declaration = parse(PARTS, "parts.yaml")
    assert declaration.entity("Order").partition and not declaration.entity("Customer").partition
    ordered = declaration.model.relations["Customer.orderedProducts"]
    assert isinstance(ordered, Collection) and ordered.range == "orderedAt"
    items = declaration.model.relations["Order.items"]
    assert isinstance(items, Collection) and items.range is None
    (lookup,) = declaration.model.lookups
    assert (lookup.name, lookup.entity.name, lookup.index, lookup.description) == (
        "invoiceById",
        "Invoice",
        "GSI1",
        "An invoice by its id alone.",
    )


def test_the_published_schema_accepts_partitions_ranges_and_lookups() -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(yaml.safe_load(PARTS), schema)
    for broken in (
        PARTS.replace("partition: true", "partition: yes please"),
        PARTS.replace("range: orderedAt", "range: 3"),
        PARTS.replace("{entity: Invoice, index: GSI1,", "{entity: Invoice,"),
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(broken), schema)


def test_a_partition_entity_with_attributes_is_refused_at_its_line() -> None:
    broken = PARTS.replace("    partition: true\n", "    partition: true\n    attributes: {total: N}\n")
    assert _parts_error(broken).startswith(
        "parts.yaml:9: entities.Order: Order: a partition entity has no item, so no attributes"
    )
    assert _parts_error(PARTS.replace("partition: true", "partition: sometimes")) == (
        "parts.yaml:12: entities.Order.partition: expected true or false, found text"
    )


def test_a_range_on_a_field_the_sort_key_does_not_end_with_is_refused_at_the_collection() -> None:
    message = _parts_error(PARTS.replace("range: orderedAt", "range: quantity"))
    assert message.startswith("parts.yaml:25: collections.Customer.orderedProducts: Customer.orderedProducts: range=")


def test_a_collection_declares_its_root_field_and_a_taken_name_is_refused_at_the_collection() -> None:
    rooted = PARTS.replace("range: orderedAt}", "range: orderedAt, root: customerProducts}")
    declaration = parse(rooted, "parts.yaml")
    assert declaration.model.root_collections == {
        "customerProducts": declaration.model.relations["Customer.orderedProducts"]
    }
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(yaml.safe_load(rooted), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(rooted.replace("root: customerProducts", "root: 3")), schema)
    assert _parts_error(rooted.replace("root: customerProducts", "root: invoiceById")).startswith(
        "parts.yaml:25: collections.Customer.orderedProducts: Customer.orderedProducts: its root field 'invoiceById'"
        " is taken"
    )


def test_a_collection_of_several_members_is_a_union_and_what_it_misses_is_refused_at_the_collection() -> None:
    union = PARTS.replace(
        "  Order.items: {parent: Order, member: OrderItem}\n",
        "  Order.items: {parent: Order, member: OrderItem}\n"
        "  Order.details: {parent: Order, member: [OrderItem, Invoice], union: Detail}\n",
    )
    details = parse(union, "parts.yaml").model.relations["Order.details"]
    assert isinstance(details, Collection)
    assert ([one.name for one in details.members], details.union_name) == (["OrderItem", "Invoice"], "Detail")
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(yaml.safe_load(union), schema)
    for broken in (union.replace("[OrderItem, Invoice]", "[OrderItem]"), union.replace("union: Detail", "union: 3")):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(broken), schema)
    assert _parts_error(union.replace("[OrderItem, Invoice]", "[OrderItem, Bill]")) == (
        "parts.yaml:25: collections.Order.details.member.1: no entity named 'Bill' is declared"
    )
    assert _parts_error(union.replace("[OrderItem, Invoice]", "[OrderItem]")).startswith(
        "parts.yaml:25: collections.Order.details: Order.details: a union connection lists two entities or more"
    )
    refused = union.replace(
        "      quantity: INT\n",
        '      quantity: INT\n  Note:\n    keys:\n      table: {pk: "o#{orderId}", sk: "n#{noteId}"}\n',
    )
    assert "Order.details: Note's items ('o#{orderId}'/'n#{noteId}') can sort among the union's members" in (
        _parts_error(refused)
    )


def test_a_lookup_is_checked_with_its_line_and_key() -> None:
    assert _parts_error(PARTS.replace("{entity: Invoice,", "{entity: Bill,")) == (
        "parts.yaml:27: lookups.invoiceById.entity: no entity named 'Bill' is declared"
    )
    assert _parts_error(PARTS.replace("{entity: Invoice, index: GSI1,", "{entity: Invoice,")) == (
        "parts.yaml:27: lookups.invoiceById: 'index' is required: a lookup reads one entity from one secondary index"
    )
    assert _parts_error(PARTS.replace("index: GSI1, description", "index: GSI9, description")).startswith(
        "parts.yaml:27: lookups.invoiceById: lookup 'invoiceById': Invoice has no keys in index 'GSI9'"
    )
    assert _parts_error(PARTS.replace("description: An invoice", "colour: An invoice")) == (
        "parts.yaml:27: lookups.invoiceById.colour: unknown key; expected one of description, entity, index"
    )


MINTED = """\
table: desk
keys: {pk: PK, sk: SK}
entities:
  Project:
    keys:
      table: {pk: "PROJ#{projectId}", sk: META}
    attributes:
      lastNumber: {type: INT, writable: false}
  Ticket:
    keys:
      table: {pk: "PROJ#{projectId}", sk: "TICKET#{ticketNumber:07}"}
    mint: ticketNumber
    minted: {parent: Project, counter: lastNumber}
  Event:
    keys:
      table: {pk: "PROJ#{projectId}", sk: "EVENT#{eventId}"}
    mint: eventId
    minted: ulid
"""


def test_a_file_declares_numbered_and_ulid_ids() -> None:
    declaration = parse(MINTED, "desk.yaml")

    assert declaration.entity("Ticket").minted == Numbering("Project", "lastNumber")
    assert declaration.entity("Event").minted == "ulid"
    assert declaration.entity("Project").minted == "time"
    jsonschema.validate(yaml.safe_load(MINTED), json.loads(SCHEMA_PATH.read_text()))


def test_a_broken_minted_id_is_named_with_its_line() -> None:
    def error(text: str) -> str:
        with pytest.raises(DeclarationFileError) as raised:
            parse(text, "desk.yaml")
        return str(raised.value)

    assert error(MINTED.replace("minted: ulid", "minted: uuid")) == (
        "desk.yaml:18: entities.Event.minted: an id is minted as time, ulid or {parent: <entity>, counter: <attribute>}"
    )
    assert error(MINTED.replace("{parent: Project, counter: lastNumber}", "{parent: Project}")) == (
        "desk.yaml:13: entities.Ticket.minted: numbers are counted by an attribute of a parent: give both parent and"
        " counter"
    )
    assert "numbered from Project.seq: the counter must be a number the gateway keeps on Project" in error(
        MINTED.replace("counter: lastNumber", "counter: seq")
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            yaml.safe_load(MINTED.replace("minted: ulid", "minted: uuid")), json.loads(SCHEMA_PATH.read_text())
        )


ELECTRODB = """\
table: shop
keys: {pk: pk, sk: sk}
entities:
  Store:
    keys:
      table: {pk: "$shop#storeid_{storeId:lower}", sk: "$store_1"}
    constants: {__edb_e__: store, __edb_v__: "1"}
    attributes:
      storeId: {type: S, from_id: storeId}
      status: {type: S, enum: [open, in-progress, 2fa], enum_names: {2fa: TWO_FACTOR}}
      createdAt: {type: N, on_create: now, clock: milliseconds}
      updatedAt: {type: N, on_update: now, clock: milliseconds}
      modified: {type: S, on_update: now}
"""


def test_a_file_declares_folded_keys_constants_enum_names_and_kept_times() -> None:
    jsonschema.validate(yaml.safe_load(ELECTRODB), json.loads(SCHEMA_PATH.read_text()))
    store = parse(ELECTRODB, "shop.yaml").entity("Store")
    assert store.identity == {"__edb_e__": "store", "__edb_v__": "1"}
    assert store.stored_ids == {"storeId": "storeId"}
    assert store.declared["status"].enum_members == {"open": "open", "in-progress": "in_progress", "2fa": "TWO_FACTOR"}
    assert store.declared["createdAt"].on_create == "now" and store.declared["createdAt"].clock == "milliseconds"
    assert store.declared["modified"].on_update == "now" and store.declared["modified"].clock is None


def test_a_kept_time_a_file_cannot_write_is_named_with_its_line() -> None:
    broken = ELECTRODB.replace(
        "createdAt: {type: N, on_create: now, clock: milliseconds}",
        "createdAt: {type: INT, on_create: now, clock: milliseconds}",
    )
    assert _error(broken).startswith("shop.yaml:11: entities.Store.attributes.createdAt: a time kept as INT")


HASH_ONLY = """\
table: groups
keys: {pk: id}
indexes:
  Inverted: {pk: ref}
entities:
  Membership:
    keys:
      table: {pk: "M#{userId}|{groupId}", separator: "|"}
      Inverted: {pk: "G#{groupId}"}
"""


def test_a_table_and_an_index_keyed_by_a_partition_key_alone_are_declared_without_sk() -> None:
    jsonschema.validate(yaml.safe_load(HASH_ONLY), json.loads(SCHEMA_PATH.read_text()))
    model = parse(HASH_ONLY, "groups.yaml").model
    assert (model.index(None).sk, model.index("Inverted").sk) == (None, None)
    membership = model.entities[0]
    assert not membership.primary.sorted and membership.keys["Inverted"].pk.pattern == "G#{groupId}"
    assert _error(HASH_ONLY.replace('{pk: "G#{groupId}"}', '{pk: "G#{groupId}", sk: X}'), "groups.yaml") == (
        "groups.yaml:9: entities.Membership.keys.Inverted.sk: index Inverted has a partition key alone (ref): drop"
        " sk, or give the index its sort key attribute (sk: <attribute>)"
    )
    sorted_ = HASH_ONLY.replace("keys: {pk: id}", "keys: {pk: id, sk: sk}")
    assert _error(sorted_, "groups.yaml") == (
        "groups.yaml:8: entities.Membership.keys.table: 'sk' is required: the table sorts by sk, so give its"
        " template (sk: ...)"
    )


LOCAL = """\
table: shops
keys: {pk: PK, sk: SK}
indexes:
  ByPrice: {pk: PK, sk: Price, local: true}
entities:
  Shop:
    keys:
      table: {pk: "SHOP#{shopId}", sk: SHOP}
  Item:
    keys:
      table: {pk: "SHOP#{shopId}", sk: "ITEM#{itemId}"}
      ByPrice: {pk: "SHOP#{shopId}", sk: "{price:06}#{itemId}"}
collections:
  Shop.cheapest: {parent: Shop, member: Item, index: ByPrice, consistent: true}
"""


def test_a_local_index_and_a_consistent_collection_are_declared_in_a_file() -> None:
    jsonschema.validate(yaml.safe_load(LOCAL), json.loads(SCHEMA_PATH.read_text()))
    model = parse(LOCAL, "shops.yaml").model
    assert model.index("ByPrice").local and model.collections[0].consistent
    assert _error(LOCAL.replace("{pk: PK, sk: Price, local: true}", "{pk: PK, local: true}"), "shops.yaml") == (
        "shops.yaml:4: indexes.ByPrice: a local index sorts the table's partitions by an attribute of its own: give sk"
    )


def test_an_index_projection_is_declared_in_a_file() -> None:
    included = LOCAL.replace(
        "{pk: PK, sk: Price, local: true}", "{pk: PK, sk: Price, local: true, projection: [version]}"
    )
    jsonschema.validate(yaml.safe_load(included), json.loads(SCHEMA_PATH.read_text()))
    assert parse(included, "shops.yaml").model.index("ByPrice").projection == ("version",)
    assert _error(included.replace("[version]", "SOME"), "shops.yaml") == (
        "shops.yaml:4: indexes.ByPrice.projection: expected ALL, KEYS_ONLY or a list of the attributes it includes"
    )
    assert _error(included.replace("[version]", "KEYS_ONLY"), "shops.yaml").startswith(
        "shops.yaml:14: collections.Shop.cheapest: Shop.cheapest: index 'ByPrice' does not project ['version']"
    )


def test_an_index_keyed_by_several_attributes_is_refused_as_not_supported_yet() -> None:
    several = HASH_ONLY.replace("Inverted: {pk: ref}", "Inverted: {pk: [tenant, ref]}")
    assert _error(several, "groups.yaml") == (
        "groups.yaml:4: indexes.Inverted.pk: a key of several attributes is not supported yet: name one attribute"
        " (pk: <attribute>), or keep a composite key in one attribute ('{a}#{b}')"
    )
    with pytest.raises(ValueError, match=re.escape("index 'GSI': a key of several attributes (up to four partition")):
        Index("GSI", ("tenant", "ref"), "at")  # type: ignore[arg-type]
