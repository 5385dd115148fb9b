"""DynamoDB's wire format decoded fast: attribute values to Python, and reads that skip botocore's parser."""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Callable, Mapping
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
    return {name: decode_value(av) for name, av in raw.items()}


def _decode_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [decode_item(item) for item in items]


def _decode_responses(responses: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    return {table: _decode_items(items) for table, items in responses.items()}


def _before_parse(field: str, decode: Callable[[Any], Any]) -> Callable[..., None]:
    """A ``before-parse`` handler that decodes ``field`` itself and leaves the rest of the body to botocore.

    Only the item payload is taken out: what remains (Count, LastEvaluatedKey, UnprocessedKeys,
    ConsumedCapacity) is small, is re-encoded for botocore's parser and so comes back exactly as the stock
    client returns it, which matters because LastEvaluatedKey and UnprocessedKeys are sent back to DynamoDB
    as they are. ResponseMetadata is built by botocore as usual.
    """

    def handler(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
        if response_dict["status_code"] >= 300:
            return
        try:
            body = orjson.loads(response_dict["body"])
        except orjson.JSONDecodeError:
            # A damaged body is botocore's to handle: its parser tolerates it and the DynamoDB CRC32 check
            # in the retry handler then asks for the request to be sent again.
            return
        payload = body.pop(field, None)
        if payload is None:
            return
        customized_response_dict[field] = decode(payload)
        response_dict["body"] = orjson.dumps(body)

    return handler


_FAST_READS = {
    "Query": _before_parse("Items", _decode_items),
    "GetItem": _before_parse("Item", decode_item),
    "BatchGetItem": _before_parse("Responses", _decode_responses),
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
