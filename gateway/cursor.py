"""Opaque pagination cursors: the position to resume from, signed and bound to the field that issued it."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json

from gateway.errors import BadUserInput

_SIGNATURE_BYTES = 16


class CursorCodec:
    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()

    def encode(self, binding: str, position: dict[str, str]) -> str:
        payload = json.dumps(position, separators=(",", ":"), sort_keys=True).encode()
        return _b64(self._sign(binding, payload) + payload)

    def decode(self, binding: str, cursor: str) -> dict[str, str]:
        """The position in ``cursor``; refuses one that was altered or issued by another field or parent."""
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            raw = b""
        signature, payload = raw[:_SIGNATURE_BYTES], raw[_SIGNATURE_BYTES:]
        if not payload or not hmac.compare_digest(signature, self._sign(binding, payload)):
            raise BadUserInput("the cursor is not valid for this field", argument="after")
        position = json.loads(payload)
        if not isinstance(position, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in position.items()
        ):
            raise BadUserInput("the cursor is not valid for this field", argument="after")
        return position

    def _sign(self, binding: str, payload: bytes) -> bytes:
        message = binding.encode() + b"\x00" + payload
        return hmac.new(self._secret, message, hashlib.sha256).digest()[:_SIGNATURE_BYTES]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
