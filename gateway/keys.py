"""Key templates: the one place that formats and parses key strings such as ``ORG#<orgName>#USER#<username>``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.errors import BadUserInput

SEPARATOR = "#"
MAX_ID_LENGTH = 128

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

Ids = Mapping[str, str]


def head(key: str) -> str:
    """The text before the first separator, which keys of one template share unless it starts with an id."""
    return key.partition(SEPARATOR)[0]


def validate_id(value: str, argument: str) -> str:
    """Refuse an id that cannot be a key segment, before it reaches DynamoDB."""
    if not 0 < len(value) <= MAX_ID_LENGTH:
        raise BadUserInput(f"{argument} must be 1 to {MAX_ID_LENGTH} characters long", argument=argument)
    if SEPARATOR in value or _CONTROL.search(value):
        raise BadUserInput(f"{argument} may not contain '{SEPARATOR}' or control characters", argument=argument)
    return value


@dataclass(frozen=True)
class KeyTemplate:
    """A key string with named id segments, e.g. ``WS#{workspaceId}``; ids never contain the separator."""

    pattern: str
    fields: tuple[str, ...] = field(init=False)
    literal_prefix: str = field(init=False)
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _format: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fields = tuple(_PLACEHOLDER.findall(self.pattern))
        literals = _PLACEHOLDER.split(self.pattern)[::2]
        between = literals[1:-1]
        if (literals[0] and fields and not literals[0].endswith(SEPARATOR)) or any(
            not (literal.startswith(SEPARATOR) and literal.endswith(SEPARATOR)) for literal in between
        ):
            raise ValueError(f"key template {self.pattern!r}: a field must follow {SEPARATOR!r}")
        if fields and literals[-1] and not literals[-1].startswith(SEPARATOR):
            raise ValueError(f"key template {self.pattern!r}: text after a field must start with {SEPARATOR!r}")
        if SEPARATOR in "".join(fields):
            raise ValueError(f"key template {self.pattern!r}: field names may not contain {SEPARATOR!r}")
        # A repeated field matches the text of its first occurrence, so it holds one value.
        regex = "".join(
            re.escape(literal)
            + (f"(?P={name})" if name in fields[:i] else f"(?P<{name}>[^{SEPARATOR}]+)" if i < len(fields) else "")
            for i, (literal, name) in enumerate(zip(literals, [*fields, ""], strict=True))
        )
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "literal_prefix", literals[0])
        object.__setattr__(self, "_regex", re.compile(regex))
        # The pattern for str.format (literal braces doubled): keys are formatted for every item a request reads.
        template = "".join(
            literal.replace("{", "{{").replace("}", "}}") + ("{" + name + "}" if i < len(fields) else "")
            for i, (literal, name) in enumerate(zip(literals, [*fields, ""], strict=True))
        )
        object.__setattr__(self, "_format", template)

    @property
    def is_constant(self) -> bool:
        return not self.fields

    @property
    def head(self) -> str | None:
        """The ``head`` of every key of this shape; None when keys of this shape can have any head (the template
        starts with an id, or its first id comes before the first separator)."""
        if self.is_constant:
            return head(self.pattern)
        return head(self.literal_prefix) if SEPARATOR in self.literal_prefix else None

    def format(self, ids: Ids) -> str:
        return self._format.format_map(ids)

    def prefix(self, ids: Ids) -> str:
        """The key up to the first id not given: the argument of ``begins_with`` at that level."""
        out = []
        for i, part in enumerate(_PLACEHOLDER.split(self.pattern)):
            if i % 2 == 0:
                out.append(part)
            elif part in ids:
                out.append(ids[part])
            else:
                break
        return "".join(out)

    def parse(self, value: str) -> dict[str, str] | None:
        """The ids in ``value``, or None when it does not have this template's shape."""
        match = self._regex.fullmatch(value)
        return None if match is None else match.groupdict()
