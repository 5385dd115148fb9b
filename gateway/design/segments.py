"""Key segments: how each field of a key template is written into a key string and read back out of one.

A template is literal text and fields: ``{id}`` (text holding no separator), ``{id:07}`` (a whole number written
zero-padded to 7 digits, read back without the padding, so ``7`` and ``0000007`` are one id; ``{id:01}`` is a whole
number written plain), ``{id:date}`` (a calendar date, ``YYYY-MM-DD``), ``{id:lower}`` and ``{id:upper}`` (text
written lower- or upper-cased: ``{country:lower}`` writes ``US`` as ``us``, so both find one key, which reads back
``us``; numbers and dates have no case), and ``{id%8}`` (a shard: 0 to 7, from the hash of ``id``). Fields may be
glued to literal text (``c#{customerId}``, ``{kind}LIKE#{user}``) as long as each key string has exactly one
reading: the text between two fields must hold a separator, which field values never do. Whether two templates can
be one key string is judged on what each field holds (:func:`meet`): a number holds digits alone and a date digits
and dashes, so ``A{n:01}`` and ``AB{id}`` never meet, nor ``A{day:date}`` and ``AB{id}``.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gateway.errors import BadUserInput

SHARD_NAME = "__shard__"
MAX_SHARDS = 16
"""The most partitions a key may spread over: a sharded page is one Query per shard."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::(0[1-9][0-9]*|date|lower|upper)|%([0-9]+))?\}")
_ANY_BRACE = re.compile(r"[{}]")
_DIGITS = re.compile(r"[0-9]+")
_STAND_IN = "\x00"
"""What the ids the cost estimate makes up start with (no id from a request holds a control character). They, and
the plan's placeholders (``{ticketId}``), are written as they are where a real id must be a number."""
Case = Literal["lower", "upper"]
_CASES: dict[str, Case] = {"lower": "lower", "upper": "upper"}


@dataclass(frozen=True)
class Segment:
    """One field of a template: ``name`` (``SHARD_NAME`` for a shard), and how its value is written."""

    name: str
    width: int | None = None
    """Zero-padded to this many digits: a whole number; None for text."""
    shards: int = 1
    """More than 1 for a shard segment."""
    sharded_by: str | None = None
    date: bool = False
    """A calendar date written ``YYYY-MM-DD``: a date's keys sort as the dates do."""
    case: Case | None = None
    """Text written lower- or upper-cased: the key holds the folded value, whatever case the id was given in."""

    @property
    def spec(self) -> str:
        if self.date:
            return f"{{{self.name}:date}}"
        if self.width is not None:
            return f"{{{self.name}:0{self.width}}}"
        if self.sharded_by is not None:
            return f"{{{self.sharded_by}%{self.shards}}}"
        if self.case is not None:
            return f"{{{self.name}:{self.case}}}"
        return f"{{{self.name}}}"

    def regex(self, stops: str, before: tuple[str, ...]) -> str:
        """The regular expression of this segment: a shard's number, a number, an id, or the same field again."""
        if self.name == SHARD_NAME:
            return f"(?P<{self.name}>0|[1-9][0-9]*)"
        if self.name in before:
            return f"(?P={self.name})"
        if self.width is not None:
            return f"(?P<{self.name}>[0-9]+)"
        if self.date:
            return f"(?P<{self.name}>[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}})"
        return f"(?P<{self.name}>[^{re.escape(stops)}]+)"

    def text(self, value: object, separator: str) -> str:
        """``value`` as the key holds it; BadUserInput for a value this segment cannot hold."""
        text = str(value)
        if (self.width is not None or self.date or self.case) and (text[:1] == _STAND_IN or text == f"{{{self.name}}}"):
            return text
        if self.date:
            if not _is_date(text):
                raise BadUserInput(f"{self.name} must be a date, YYYY-MM-DD, not {text!r}", argument=self.name)
            return text
        if self.width is not None:
            if not _DIGITS.fullmatch(text):
                raise BadUserInput(f"{self.name} must be a whole number, not {text!r}", argument=self.name)
            return f"{int(text):0{self.width}d}"
        if separator in text:
            raise BadUserInput(f"{self.name} may not contain {separator!r}", argument=self.name)
        return text if self.case is None else fold(text, self.case)

    def value(self, text: str) -> str:
        """The field's value as read from a key: a padded number without its padding."""
        return text if self.width is None else str(int(text))


def fold(text: str, case: Case) -> str:
    """``text`` as a key of that case holds it."""
    return text.lower() if case == "lower" else text.upper()


def _is_date(text: str) -> bool:
    """Whether ``text`` is a calendar date written ``YYYY-MM-DD``."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Layout:
    """A template split into literal text and segments: ``literals[i]`` comes before ``segments[i]``, and
    ``literals[-1]`` after the last segment."""

    literals: tuple[str, ...]
    segments: tuple[Segment, ...]

    @property
    def plain(self) -> bool:
        """Whether every segment is written as its value verbatim, with nothing to check or fold (no padding, no
        date, no case)."""
        return all(segment.width is None and not segment.date and segment.case is None for segment in self.segments)


def layout(pattern: str, separator: str, stops: str) -> Layout:
    """Split ``pattern`` into its literals and segments; ValueError, naming the template and the fix, for a
    template whose keys could be read more than one way."""
    where = f"key template {pattern!r}"
    if len(separator) != 1 or separator.isalnum() or separator in "{}_":
        raise ValueError(f"{where}: the separator is one character that is not a letter, a digit, '_' or a brace")
    pieces = _PLACEHOLDER.split(pattern)
    literals = tuple(pieces[::4])
    if any(_ANY_BRACE.search(literal) for literal in literals):
        raise ValueError(
            f"{where}: a field is {{name}}, {{name:07}} (zero-padded number), {{name:date}} (YYYY-MM-DD),"
            " {name:lower} or {name:upper} (text lower- or upper-cased; numbers and dates have no case) or"
            " {name%8} (shard)"
        )
    segments: list[Segment] = []
    for name, width, shards in zip(pieces[1::4], pieces[2::4], pieces[3::4], strict=True):
        if name == SHARD_NAME:
            raise ValueError(f"{where}: {SHARD_NAME} is not a field name")
        if shards:
            count = int(shards)
            if not 2 <= count <= MAX_SHARDS:
                raise ValueError(f"{where}: a key spreads over 2 to {MAX_SHARDS} shards")
            segments.append(Segment(SHARD_NAME, shards=count, sharded_by=name))
        elif width == "date":
            segments.append(Segment(name, date=True))
        elif width in _CASES:
            segments.append(Segment(name, case=_CASES[width]))
        else:
            segments.append(Segment(name, int(width) if width else None))
    if sum(segment.sharded_by is not None for segment in segments) > 1:
        raise ValueError(f"{where}: one shard segment at most")
    seen: dict[str, Segment] = {}
    for segment in segments:
        if seen.setdefault(segment.name, segment) != segment:
            raise ValueError(
                f"{where}: {segment.name} is written two ways in one key; write it one way here (padded and plain"
                " may differ between keys)"
            )
    for i, segment in enumerate(segments):
        after = literals[i + 1]
        last = i == len(segments) - 1
        if not last and not any(stop in after for stop in stops):
            raise ValueError(
                f"{where}: {segment.spec} and {segments[i + 1].spec} have no separator between them, so a key"
                f" could be split between them in more than one way; put {separator!r} between them"
            )
        if (segment.width is not None or segment.shards > 1) and after[:1].isdigit():
            raise ValueError(f"{where}: the number {segment.spec} runs into the digit after it; put {separator!r}")
    return Layout(literals, tuple(segments))


@dataclass(frozen=True)
class _Chars:
    """A set of characters: ``only`` these (None: any), but none of ``but``, and of those only the ones each case in
    ``cases`` leaves as they are (a folded field's text: ``{id:lower}`` holds no capital)."""

    only: frozenset[str] | None
    but: frozenset[str] = frozenset()
    cases: frozenset[Case] = frozenset()

    def __and__(self, other: _Chars) -> _Chars:
        cases = self.cases | other.cases
        if self.only is None and other.only is None:
            # Never empty: digits and most punctuation have no case.
            return _Chars(None, self.but | other.but, cases)
        if self.only is None or other.only is None:
            only = self.only or other.only or frozenset()
        else:
            only = self.only & other.only
        return _Chars(
            frozenset(char for char in only if all(fold(char, case) == char for case in cases)) - self.but - other.but
        )

    @property
    def empty(self) -> bool:
        return self.only is not None and not self.only


_DIGIT_CHARS = _Chars(frozenset("0123456789"))

_Step = tuple[_Chars, bool]
"""One step of a key's language: a character of a set, and whether it repeats (a field's one or more)."""


def _steps(layout: Layout, stops: str) -> list[_Step]:
    """The language of a template's keys as steps: literal characters, and each field's characters (text holding no
    stop, or digits for a number or a shard), read one or more times. A repeated field is read as any value of its
    kind: the language only grows, so no meeting is missed."""
    out: list[_Step] = []
    for literal, segment in zip(layout.literals, [*layout.segments, None], strict=True):
        out += [(_Chars(frozenset(char)), False) for char in literal]
        if segment is not None and segment.date:
            out += [(_Chars(frozenset("-")) if char == "-" else _DIGIT_CHARS, False) for char in "0000-00-00"]
        elif segment is not None:
            numeric = segment.width is not None or segment.name == SHARD_NAME
            cases = frozenset([segment.case] if segment.case is not None else [])
            out.append((_DIGIT_CHARS if numeric else _Chars(None, frozenset(stops), cases), True))
    return out


def meet(languages: Sequence[tuple[Layout, str]]) -> bool:
    """Whether one key string has every one of these shapes (each a template's layout and stops): a walk of their
    product, so ``A{n:05}`` and ``A/{id}`` never meet (a number holds no ``/``) and ``a{id}`` and ``az{id}`` do."""
    automata = [_steps(layout, stops) for layout, stops in languages]
    start = tuple(0 for _ in automata)
    final = tuple(len(steps) for steps in automata)
    seen, todo = {start}, [start]
    while todo:
        state = todo.pop()
        if state == final:
            return True
        moves: list[tuple[_Chars, tuple[int, ...]]] = [(_Chars(None), ())]
        for steps, at in zip(automata, state, strict=True):
            options = [] if at == len(steps) else [(steps[at][0], at + 1)]
            if at > 0 and steps[at - 1][1]:
                options.append((steps[at - 1][0], at))
            moves = [
                (chars & one, (*to, nxt)) for chars, to in moves for one, nxt in options if not (chars & one).empty
            ]
        for _, nxt in moves:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False
