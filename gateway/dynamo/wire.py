"""DynamoDB's wire format decoded fast: attribute values to Python, and reads that skip botocore's parser."""

from __future__ import annotations

import json
import re
from base64 import b64decode
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import orjson
from boto3.dynamodb.types import DYNAMODB_CONTEXT, Binary

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

# Bound once: the same context object as boto3's TypeDeserializer, so precision, rounding and traps match it
# exactly (a 39-digit number raises here as it does there).
_decimal = DYNAMODB_CONTEXT.create_decimal

# aiobotocore emits ``before-parse`` from 2.15 (botocore 1.35.16); before that the handler would never run and
# callers would silently receive wire-format items.
_MIN_AIOBOTOCORE = (2, 15)

_SURROGATE = re.compile("[\ud800-\udfff]")
# What decode_value raises on a value it cannot read: an unknown type tag, a malformed attribute value, a number
# out of DynamoDB's range.
UNDECODABLE = (TypeError, ValueError, AttributeError, ArithmeticError)


class Unreadable(dict[str, Any]):
    """An item with attributes that cannot be served: text that is not valid Unicode (a lone UTF-16 surrogate,
    which DynamoDB stores and returns as a ``\\uD800`` escape but UTF-8 cannot carry), or a value no decoder reads.

    The values are kept as read, so a write can still address the item by its key; ``invalid`` names the
    attributes a response must not carry.
    """

    __slots__ = ("invalid",)

    def __init__(self, item: Mapping[str, Any], invalid: Iterable[str]) -> None:
        super().__init__(item)
        self.invalid = frozenset(invalid)


def is_text(value: Any) -> bool:
    """Whether every string in ``value`` (at any depth, map keys included) is valid Unicode."""
    if isinstance(value, str):
        return value.isascii() or _SURROGATE.search(value) is None
    if isinstance(value, Mapping):
        return all(is_text(name) and is_text(member) for name, member in value.items())
    if isinstance(value, list | set | frozenset):
        return all(is_text(member) for member in value)
    return True


def checked(item: dict[str, Any]) -> dict[str, Any]:
    """``item``, or an ``Unreadable`` copy naming the attributes that hold text that is not valid Unicode."""
    if isinstance(item, Unreadable):
        return item
    invalid = [name for name, value in item.items() if not is_text(value)]
    return Unreadable(item, invalid) if invalid else item


def decode_value(av: dict[str, Any]) -> Any:
    """One attribute value (``{"N": "1.5"}``) as ``TypeDeserializer`` would return it after botocore."""
    ((tag, value),) = av.items()
    # Ordered by how often each type occurs in items; a dict of decoder functions measured ~10% slower.
    if tag == "S":
        return value
    if tag == "N":
        return _decimal(value)
    if tag == "M":
        return {name: decode_value(member) for name, member in value.items()}
    if tag == "BOOL":
        return value
    if tag == "L":
        return [decode_value(member) for member in value]
    if tag == "NULL":
        return None
    if tag == "B":
        return Binary(b64decode(value))
    if tag == "SS":
        return set(value)
    if tag == "NS":
        return {_decimal(member) for member in value}
    if tag == "BS":
        return {Binary(b64decode(member)) for member in value}
    raise TypeError(f"unsupported DynamoDB attribute type {tag!r}")


def decode_item(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A wire-format item (attribute name -> attribute value) as plain Python values."""
    item: dict[str, Any] = {}
    for name, av in raw.items():
        # Most attributes are strings (every key is): taken without a call (measured: a fifth off an item).
        text = av.get("S")
        item[name] = text if text is not None else decode_value(av)
    return item


def tolerant_decode_item(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``decode_item`` for an item that may hold what cannot be served: an ``Unreadable`` then, not an error.

    An attribute that does not decode at all keeps its wire-format value and is named invalid.
    """
    item: dict[str, Any] = {}
    invalid: list[str] = []
    for name, av in raw.items():
        try:
            item[name] = decode_value(av)
        except UNDECODABLE:
            item[name] = av
            invalid.append(name)
            continue
        if not is_text(item[name]):
            invalid.append(name)
    return Unreadable(item, invalid) if invalid else item


_Decode = Callable[[Mapping[str, Any]], dict[str, Any]]


def _one(item: Mapping[str, Any], decode: _Decode) -> Any:
    return decode(item)


def _many(items: list[dict[str, Any]], decode: _Decode) -> Any:
    return [decode(item) for item in items]


def _by_table(responses: dict[str, list[dict[str, Any]]], decode: _Decode) -> Any:
    return {table: [decode(item) for item in items] for table, items in responses.items()}


def _before_parse(field: str, shape: Callable[[Any, _Decode], Any]) -> Callable[..., None]:
    """A ``before-parse`` handler that decodes ``field`` itself and leaves the rest of the body to botocore.

    Only the item payload is taken out: what remains (Count, LastEvaluatedKey, UnprocessedKeys,
    ConsumedCapacity) is small, is re-encoded for botocore's parser and so comes back exactly as the stock
    client returns it, which matters because LastEvaluatedKey and UnprocessedKeys are sent back to DynamoDB
    as they are. ResponseMetadata is built by botocore as usual.

    orjson refuses a body with a lone surrogate escape (``"\\uD800"``), which DynamoDB stores and returns as
    written. Such a body is read by the standard library instead, which keeps the surrogate, and its items are
    decoded one by one so that only those holding such text come back ``Unreadable``, never the whole page.
    """

    def handler(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
        if response_dict["status_code"] >= 300:
            return
        decode: _Decode = decode_item
        dumps: Callable[[Any], bytes] = orjson.dumps
        try:
            body = orjson.loads(response_dict["body"])
        except orjson.JSONDecodeError:
            try:
                body = json.loads(response_dict["body"])
            except ValueError:
                # A damaged body is botocore's to handle: its parser tolerates it and the DynamoDB CRC32 check
                # in the retry handler then asks for the request to be sent again.
                return
            # ASCII escapes keep a lone surrogate in LastEvaluatedKey as DynamoDB sent it, for botocore to read.
            decode, dumps = tolerant_decode_item, _ascii_json
        payload = body.pop(field, None)
        if payload is None:
            return
        try:
            customized_response_dict[field] = shape(payload, decode)
        except UNDECODABLE:
            # A value the fast decoder does not know (a type DynamoDB added later): only its item is unreadable.
            customized_response_dict[field] = shape(payload, tolerant_decode_item)
        response_dict["body"] = dumps(body)

    return handler


def _ascii_json(body: Any) -> bytes:
    return json.dumps(body).encode()


_FAST_READS = {
    "Query": _before_parse("Items", _many),
    "GetItem": _before_parse("Item", _one),
    "BatchGetItem": _before_parse("Responses", _by_table),
}


def install_fast_reads(client: DynamoDBClient) -> None:
    """Make ``client`` return Query ``Items``, GetItem ``Item`` and BatchGetItem ``Responses`` decoded.

    Botocore walks every attribute value of a response against the service model (~5 ms of CPU for 100
    items) and ``TypeDeserializer`` then walks it again; ``orjson`` and one ``decode_item`` pass do both
    jobs in a fraction of that. The decoded values are plain Python, as ``decode_item`` returns them; every
    other key of the response is what botocore returns. Signing, retries and error parsing are untouched:
    the handlers only act on 2xx responses, so errors and throttling take botocore's path. Idempotent;
    affects only this client (botocore gives each client its own copy of the event hooks). Use it on a
    low-level client only: a boto3 resource deserializes items again in ``after-call`` and would fail on
    decoded values.

    Why ``before-parse``: it is a per-client, per-operation event that botocore itself uses to adjust
    responses (S3's 200-with-error handling rewrites ``response_dict`` there), it runs after checksums and
    before the parser, and its ``customized_response_dict`` is merged into the parsed result by contract.
    The alternatives replace private attributes (``client._endpoint``, its ``_response_parser_factory``) or
    subclass aiobotocore's parser classes, which change between releases; ``after-call`` is too late, the
    parsing has already been paid for.
    """
    installed = tuple(int(part) for part in version("aiobotocore").split(".")[:2])
    if installed < _MIN_AIOBOTOCORE:
        raise RuntimeError(f"fast reads need aiobotocore >= 2.15, found {version('aiobotocore')}")
    model = client.meta.service_model
    protocols = model.metadata.get("protocols", [model.protocol])
    if protocols != ["json"]:
        raise RuntimeError(f"fast reads expect DynamoDB to speak JSON only, the model lists {protocols}")
    events = client.meta.events
    for operation, handler in _FAST_READS.items():
        events.register(f"before-parse.dynamodb.{operation}", handler, unique_id=f"tablegraph-fast-reads-{operation}")
