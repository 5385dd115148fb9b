"""Key templates: the one place that formats and parses key strings such as ``ORG#<orgName>#USER#<username>``."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.design import segments
from gateway.errors import BadUserInput

SEPARATOR = "#"
MAX_ID_LENGTH = 128

_SHARD_NAME = segments.SHARD_NAME
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
    own: it is computed from ``taskId`` whenever a key is formatted, and dropped when one is parsed. A segment
    ``{ticketId:07}`` is a whole number written zero-padded (``TICKET#0000007``) and read back without the padding
    (``7``). A segment ``{country:lower}`` (or ``:upper``) is text written folded to that case: ``US`` and ``us``
    are one key, and the key reads back ``us``. ``separator``: the character this template's ids may not hold
    besides ``#`` (``ORDER|{orderId}`` with ``"|"``). See :mod:`gateway.design.segments` for what a template may
    look like.
    """

    pattern: str
    separator: str = SEPARATOR
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
    _layout: segments.Layout = field(init=False, repr=False, compare=False)
    _padded: tuple[segments.Segment, ...] = field(init=False, repr=False, compare=False)
    _folded: tuple[tuple[str, segments.Case], ...] = field(init=False, repr=False, compare=False)
    _stops: str = field(init=False, repr=False, compare=False)
    _verbatim: bool = field(init=False, repr=False, compare=False)
    """Whether a key is ``_format`` filled with the ids as they are: no padding, no date, the usual separator."""

    def __post_init__(self) -> None:
        stops = "".join(dict.fromkeys(SEPARATOR + self.separator))
        layout = segments.layout(self.pattern, self.separator, stops)
        literals, parts = layout.literals, layout.segments
        placeholders = tuple(part.name for part in parts)
        shard = next((part for part in parts if part.sharded_by is not None), None)
        fields = tuple(name for name in placeholders if name != _SHARD_NAME)
        # A repeated field matches the text of its first occurrence, so it holds one value.
        regex = "".join(
            re.escape(literal) + (part.regex(stops, placeholders[:i]) if part is not None else "")
            for i, (literal, part) in enumerate(zip(literals, [*parts, None], strict=True))
        )
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "literal_prefix", literals[0])
        object.__setattr__(self, "separators", "".join(literals).count(SEPARATOR))
        object.__setattr__(self, "sharded_by", None if shard is None else shard.sharded_by)
        object.__setattr__(self, "shards", 1 if shard is None else shard.shards)
        object.__setattr__(self, "_regex", re.compile(regex))
        object.__setattr__(self, "_layout", layout)
        object.__setattr__(self, "_stops", stops)
        object.__setattr__(self, "_padded", tuple(part for part in parts if part.width is not None))
        object.__setattr__(self, "_folded", tuple(self.cases.items()))
        # The pattern for str.format (literal braces doubled): keys are formatted for every item a request reads.
        template = "".join(
            literal.replace("{", "{{").replace("}", "}}") + ("{" + name + "}" if i < len(placeholders) else "")
            for i, (literal, name) in enumerate(zip(literals, [*placeholders, ""], strict=True))
        )
        object.__setattr__(self, "_format", template)
        object.__setattr__(self, "_verbatim", layout.plain and self.separator == SEPARATOR)

    def written(self, name: str, value: str) -> str:
        """``value`` as field ``name`` of this template is written in a key (a number padded); BadUserInput for a
        value the field cannot hold."""
        segment = next(part for part in self._layout.segments if part.name == name)
        return segment.text(value, self.separator)

    def meets(self, *others: KeyTemplate) -> bool:
        """Whether one key string can have this shape and every one of ``others``."""
        return segments.meet([(one._layout, one._stops) for one in (self, *others)])

    @property
    def numbers(self) -> frozenset[str]:
        """The fields written as zero-padded numbers (``{ticketId:07}``)."""
        return frozenset(part.name for part in self._padded)

    @property
    def cases(self) -> dict[str, segments.Case]:
        """The fields written lower- or upper-cased (``{country:lower}``), and how."""
        return {part.name: part.case for part in self._layout.segments if part.case is not None}

    @property
    def dates(self) -> frozenset[str]:
        """The fields written as calendar dates (``{day:date}``)."""
        return frozenset(part.name for part in self._layout.segments if part.date)

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
            if self._verbatim:
                return self._format.format_map(ids)
            return self._written(ids, None)
        return self.partition(ids, shard_of(str(ids[self.sharded_by]), self.shards))

    def partition(self, ids: Ids, shard: int | str) -> str:
        """The key of shard ``shard`` (0 for a key without shards): what a sharded collection reads, one Query per
        shard, knowing its parent's ids only (a plan shows ``<shard>``)."""
        if self._verbatim:
            return self._format.format_map({**ids, _SHARD_NAME: str(shard)})
        return self._written(ids, shard)

    def _written(self, ids: Ids, shard: int | str | None) -> str:
        out = []
        for literal, part in zip(self._layout.literals, self._layout.segments, strict=False):
            out.append(literal)
            out.append(str(shard) if part.name == _SHARD_NAME else part.text(ids[part.name], self.separator))
        out.append(self._layout.literals[-1])
        return "".join(out)

    def prefix(self, ids: Ids) -> str:
        """The key up to the first id not given: the argument of ``begins_with`` at that level."""
        out = []
        for literal, part in zip(self._layout.literals, [*self._layout.segments, None], strict=True):
            out.append(literal)
            if part is None:
                break
            if part.name in ids:
                out.append(part.text(ids[part.name], self.separator))
            elif part.name == _SHARD_NAME and self.sharded_by is not None and self.sharded_by in ids:
                out.append(str(shard_of(str(ids[self.sharded_by]), self.shards)))
            else:
                break
        return "".join(out)

    def parse(self, value: str) -> dict[str, str] | None:
        """The ids in ``value``, or None when it does not have this template's shape (a folded field holding text of
        another case is not what the template writes)."""
        match = self._regex.fullmatch(value)
        if match is None:
            return None
        ids = match.groupdict()
        for name, case in self._folded:
            if segments.fold(ids[name], case) != ids[name]:
                return None
        if self.sharded_by is not None:
            del ids[_SHARD_NAME]
        for part in self._padded:
            ids[part.name] = part.value(ids[part.name])
        return ids
