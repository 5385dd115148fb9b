"""Opaque pagination cursors: the position to resume from, encrypted and bound to the field that issued it."""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Iterable, Mapping, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from gateway.errors import BadUserInput

_MAX_LENGTH = 8_300
"""A position is two table keys and two index keys at most (2,048 bytes a partition key, 1,024 a sort key): a
longer text was not issued here, and is refused before it is decoded."""
_REFERENCES = 7
"""Earlier strings a value may name by number, in the three low bits of its header (0 names none)."""


class CursorCodec:
    """Cursors sealed with AES-SIV (RFC 5297), keyed from the cursor secret.

    AES-SIV is a deterministic AEAD: it takes no nonce, so a cursor is a 16-byte tag and the encrypted position,
    nothing more; the same position of the same page always gives the same cursor, which tells a client nothing it
    did not know. The field and parent that issued the cursor (``binding``) are its associated data: a cursor opens
    only where it was issued.

    The position is packed without the attribute names, since the binding fixes which they are, in order. A value
    equal to an earlier string (a part of the binding, or a value before it) is written as that string's number;
    another as what follows the binding's last part, the sort-key prefix every member of the page starts with. A
    member's partition key is its parent's and an index key often repeats a table key, so a cursor carries little
    more than the one id that is the member's own.
    """

    def __init__(self, secret: str) -> None:
        # The secret may be any text: HKDF makes of it the 512-bit key of AES-SIV with AES-256.
        key = HKDF(SHA256(), 64, salt=None, info=b"tablegraph cursor AES-SIV").derive(_utf8(secret))
        self._aead = AESSIV(key)

    def encode(self, binding: str, position: Mapping[str, str]) -> str:
        """A cursor for ``position`` (key attribute to value); it is decoded with the names in the same order."""
        packed, associated = _pack(binding, position.values())
        sealed = self._aead.encrypt(packed, [associated])
        return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()

    def decode(self, binding: str, cursor: str, names: Sequence[str], argument: str = "after") -> dict[str, str]:
        """The position in ``cursor``, by the attribute ``names`` it was made of; refuses a cursor altered, cut,
        made with another secret, or issued by another field or parent (an error on ``argument``)."""
        values = self._open(binding, cursor)
        if values is None or len(values) != len(names):
            raise BadUserInput("the cursor is not valid for this field", argument=argument)
        return dict(zip(names, values, strict=True))

    def _open(self, binding: str, cursor: str) -> list[str] | None:
        if len(cursor) > _MAX_LENGTH or not cursor.isascii():
            return None
        try:
            sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            return None
        # The decoder skips characters outside its alphabet: only the very text this codec writes is taken.
        if base64.urlsafe_b64encode(sealed).rstrip(b"=").decode() != cursor:
            return None
        try:
            packed = self._aead.decrypt(sealed, [_utf8(binding)])
        except (InvalidTag, ValueError):
            return None
        return _unpack(binding, packed)


def _pack(binding: str, values: Iterable[str]) -> tuple[bytes, bytes]:
    """Each value as a varint header (the length of what follows, shifted past the number of the string it
    repeats or starts with) and what follows, in UTF-8; and the binding as associated data."""
    number, prefix, prefix_number, known, associated = _layout(binding)
    seen: dict[str, int] = {}
    packed = bytearray()
    for value in values:
        number += 1
        reference = known.get(value) or seen.get(value)
        if reference is not None:
            packed.append(reference)
            continue
        if number <= _REFERENCES:
            seen[value] = number
        rest = value.removeprefix(prefix) if prefix_number else value
        data = _utf8(rest)
        header = len(data) << 3 | (prefix_number if len(rest) < len(value) else 0)
        while header >= 0x80:
            packed.append(header & 0x7F | 0x80)
            header >>= 7
        packed.append(header)
        packed += data
    return bytes(packed), associated


def _unpack(binding: str, packed: bytes) -> list[str] | None:
    """The values ``_pack`` wrote; None for bytes it cannot have written (they were authenticated: only a bug
    would pass them)."""
    known = binding.split("\x00")
    values: list[str] = []
    at = 0
    while at < len(packed):
        header, shift = 0, 0
        while True:
            if at == len(packed) or shift > 28:
                return None
            byte = packed[at]
            at += 1
            header |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        reference, length = header & 7, header >> 3
        if reference > len(known) or at + length > len(packed):
            return None
        try:
            rest = packed[at : at + length].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None
        at += length
        value = (known[reference - 1] if reference else "") + rest
        values.append(value)
        known.append(value)
    return values


@functools.lru_cache(maxsize=1024)
def _layout(binding: str) -> tuple[int, str, int, dict[str, int], bytes]:
    """For the cursors of one page: how many parts the binding has, its last part with that part's number (0 when
    it cannot be named), its parts by number, and the binding in UTF-8."""
    parts = binding.split("\x00")
    named = parts[:_REFERENCES]
    prefix_number = len(parts) if named[-1] and len(parts) <= _REFERENCES else 0
    known = {part: number for number, part in reversed(list(enumerate(named, 1))) if part}
    return len(parts), parts[-1], prefix_number, known, _utf8(binding)


def _utf8(text: str) -> bytes:
    # Total: a key value that is not valid Unicode still makes a cursor that opens to the same value.
    return text.encode("utf-8", "surrogatepass")
