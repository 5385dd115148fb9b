"""Key templates: the one place that formats and parses key strings such as ``ORG#<orgName>#USER#<username>``."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.errors import BadUserInput

SEPARATOR = "#"
MAX_ID_LENGTH = 128

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SHARD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)%([0-9]+)\}")
_SHARD_NAME = "__shard__"
MAX_SHARDS = 16
"""The most partitions a key may spread over: a sharded page is one Query per shard."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

Ids = Mapping[str, str]


def head(key: str) -> str:
    """The text before the first separator, which keys of one template share unless it starts with an id."""
    return key.partition(SEPARATOR)[0]


def shard_of(value: str, shards: int) -> int:
    """The shard an id lands in: the first 8 bytes of the SHA-256 of its UTF-8, big-endian, modulo ``shards``.

    Stable across processes, versions and languages (Python's own ``hash`` of a str is salted per process), so a
    write and every later read or write of the same id agree with no read to find it.
    """
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def validate_id(value: str, argument: str) -> str:
    """Refuse an id that cannot be a key segment, before it reaches DynamoDB."""
    if not 0 < len(value) <= MAX_ID_LENGTH:
        raise BadUserInput(f"{argument} must be 1 to {MAX_ID_LENGTH} characters long", argument=argument)
    if SEPARATOR in value or _CONTROL.search(value):
        raise BadUserInput(f"{argument} may not contain '{SEPARATOR}' or control characters", argument=argument)
    return value


@dataclass(frozen=True)
class KeyTemplate:
    """A key string with named id segments, e.g. ``WS#{workspaceId}``; ids never contain the separator.

    A segment ``{taskId%8}`` is a shard: the number, 0 to 7, that :func:`shard_of` gives for the id ``taskId``
    (``WS#{workspaceId}#{taskId%8}`` spreads a workspace's tasks over eight partitions). The shard is no id of its
    own: it is computed from ``taskId`` whenever a key is formatted, and dropped when one is parsed.
    """

    pattern: str
    fields: tuple[str, ...] = field(init=False)
    literal_prefix: str = field(init=False)
    separators: int = field(init=False)
    """How many separators every key of this shape holds: its literal text's, as ids hold none."""
    sharded_by: str | None = field(init=False)
    """The id whose hash picks the shard; None for a key without a shard segment."""
    shards: int = field(init=False)
    """How many partitions keys of this template spread over: 1 without a shard segment."""
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _format: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sharded = _SHARD.findall(self.pattern)
        if len(sharded) > 1:
            raise ValueError(f"key template {self.pattern!r}: one shard segment at most")
        sharded_by, shards = (sharded[0][0], int(sharded[0][1])) if sharded else (None, 1)
        if sharded and not 2 <= shards <= MAX_SHARDS:
            raise ValueError(f"key template {self.pattern!r}: a key spreads over 2 to {MAX_SHARDS} shards")
        # The shard segment is parsed and formatted as a field of a reserved name, and is not one of the ids.
        pattern = _SHARD.sub("{" + _SHARD_NAME + "}", self.pattern)
        placeholders = tuple(_PLACEHOLDER.findall(pattern))
        if placeholders.count(_SHARD_NAME) != len(sharded):
            raise ValueError(f"key template {self.pattern!r}: {_SHARD_NAME} is not a field name")
        fields = tuple(name for name in placeholders if name != _SHARD_NAME)
        literals = _PLACEHOLDER.split(pattern)[::2]
        between = literals[1:-1]
        if (literals[0] and placeholders and not literals[0].endswith(SEPARATOR)) or any(
            not (literal.startswith(SEPARATOR) and literal.endswith(SEPARATOR)) for literal in between
        ):
            raise ValueError(f"key template {self.pattern!r}: a field must follow {SEPARATOR!r}")
        if placeholders and literals[-1] and not literals[-1].startswith(SEPARATOR):
            raise ValueError(f"key template {self.pattern!r}: text after a field must start with {SEPARATOR!r}")
        if SEPARATOR in "".join(fields):
            raise ValueError(f"key template {self.pattern!r}: field names may not contain {SEPARATOR!r}")
        # A repeated field matches the text of its first occurrence, so it holds one value.
        regex = "".join(
            re.escape(literal) + _group(name, placeholders[:i]) if i < len(placeholders) else re.escape(literal)
            for i, (literal, name) in enumerate(zip(literals, [*placeholders, ""], strict=True))
        )
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "literal_prefix", literals[0])
        object.__setattr__(self, "separators", "".join(literals).count(SEPARATOR))
        object.__setattr__(self, "sharded_by", sharded_by)
        object.__setattr__(self, "shards", shards)
        object.__setattr__(self, "_regex", re.compile(regex))
        # The pattern for str.format (literal braces doubled): keys are formatted for every item a request reads.
        template = "".join(
            literal.replace("{", "{{").replace("}", "}}") + ("{" + name + "}" if i < len(placeholders) else "")
            for i, (literal, name) in enumerate(zip(literals, [*placeholders, ""], strict=True))
        )
        object.__setattr__(self, "_format", template)

    @property
    def is_constant(self) -> bool:
        return not self.fields and self.sharded_by is None

    @property
    def head(self) -> str | None:
        """The ``head`` of every key of this shape; None when keys of this shape can have any head (the template
        starts with an id, or its first id comes before the first separator)."""
        if self.is_constant:
            return head(self.pattern)
        return head(self.literal_prefix) if SEPARATOR in self.literal_prefix else None

    def format(self, ids: Ids) -> str:
        if self.sharded_by is None:
            return self._format.format_map(ids)
        return self.partition(ids, shard_of(ids[self.sharded_by], self.shards))

    def partition(self, ids: Ids, shard: int | str) -> str:
        """The key of shard ``shard`` (0 for a key without shards): what a sharded collection reads, one Query per
        shard, knowing its parent's ids only (a plan shows ``<shard>``)."""
        return self._format.format_map({**ids, _SHARD_NAME: str(shard)})

    def prefix(self, ids: Ids) -> str:
        """The key up to the first id not given: the argument of ``begins_with`` at that level."""
        out = []
        for i, part in enumerate(_PLACEHOLDER.split(_SHARD.sub("{" + _SHARD_NAME + "}", self.pattern))):
            if i % 2 == 0:
                out.append(part)
            elif part in ids:
                out.append(ids[part])
            elif part == _SHARD_NAME and self.sharded_by is not None and self.sharded_by in ids:
                out.append(str(shard_of(ids[self.sharded_by], self.shards)))
            else:
                break
        return "".join(out)

    def parse(self, value: str) -> dict[str, str] | None:
        """The ids in ``value``, or None when it does not have this template's shape."""
        match = self._regex.fullmatch(value)
        if match is None:
            return None
        ids = match.groupdict()
        if self.sharded_by is not None:
            del ids[_SHARD_NAME]
        return ids


def _group(name: str, before: tuple[str, ...]) -> str:
    """The regular expression of one segment: a shard's number, an id, or the same id again."""
    if name == _SHARD_NAME:
        return f"(?P<{name}>0|[1-9][0-9]*)"
    return f"(?P={name})" if name in before else f"(?P<{name}>[^{SEPARATOR}]+)"
