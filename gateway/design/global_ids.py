"""Global ids: one opaque string per item, unique across entities, that names the entity and its table-key ids."""

from __future__ import annotations

import base64
import binascii

from gateway.design.keys import SEPARATOR, Ids, validate_id
from gateway.design.model import Entity, Model
from gateway.errors import BadUserInput


def encode(entity: Entity, ids: Ids) -> str:
    """``<Entity>#<id1>#<id2>`` over the table-key id fields, base64url without padding."""
    return _b64(SEPARATOR.join((entity.name, *(ids[name] for name in entity.id_fields))).encode())


def decode(model: Model, text: str, argument: str = "id") -> tuple[Entity, dict[str, str]]:
    """The entity and table-key ids a global id names; BadUserInput for anything ``encode`` did not make."""
    invalid = BadUserInput(f"{argument} is not a valid global id", argument=argument)
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
        name, *parts = raw.decode("utf-8").split(SEPARATOR)
    except (binascii.Error, UnicodeError, ValueError):
        raise invalid from None
    # Only the canonical form is accepted: one item has one global id, so ids compare as strings.
    if _b64(raw) != text:
        raise invalid
    entity = next((one for one in model.entities if one.name == name and not one.internal), None)
    if entity is None or len(parts) != len(entity.id_fields):
        raise invalid
    ids = {field: validate_id(part, argument) for field, part in zip(entity.id_fields, parts, strict=True)}
    if model.canonical(entity, ids) != ids:  # a padded number: encode writes it plain, as keys read it back
        raise invalid
    return entity, ids


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
