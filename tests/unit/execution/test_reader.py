"""The reader's memory of what it recognised: an item is recognised once per request, by its identity."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Mapping
from typing import Any

import pytest

from gateway.config import Settings
from gateway.design.model import Entity, Model
from gateway.design.tenancy import Tenancy
from gateway.dynamo.accounting import Ledger
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import OPEN, Guard
from gateway.execution.reader import Reader
from schema import MODEL

STUDENT, COURSE = MODEL.entity("Student"), MODEL.entity("Course")


class _Unread:
    """What the reader reads through; these tests only recognise items in hand, so nothing is ever read."""

    model = MODEL


def _reader() -> Reader:
    settings = Settings(table="unread", cursor_secret="test", auth_open=True)
    guard = Guard(MODEL, Tenancy({}), OPEN)
    return Reader(_Unread(), settings, CursorCodec("test"), Ledger(), guard)  # type: ignore[arg-type]


@pytest.fixture
def recognitions(monkeypatch: pytest.MonkeyPatch) -> list[Mapping[str, Any]]:
    """A spy around the real ``Model.recognise``: the items it was asked about, in order."""
    asked: list[Mapping[str, Any]] = []
    recognise = Model.recognise

    def counted(self: Model, item: Mapping[str, Any], partial: bool = False) -> tuple[Entity, dict[str, str]] | None:
        asked.append(item)
        return recognise(self, item, partial)

    monkeypatch.setattr(Model, "recognise", counted)
    return asked


async def test_an_item_is_recognised_once_however_often_its_ids_are_asked_for(
    recognitions: list[Mapping[str, Any]],
) -> None:
    assert STUDENT is not None and COURSE is not None
    reader = _reader()
    item = {"PK": "STU#s1", "SK": "PROFILE", "name": "Ada"}
    answers = [reader.ids_of(STUDENT, item), reader.recognised(item), reader.ids_of(STUDENT, item)]
    assert answers == [{"studentId": "s1"}, (STUDENT, {"studentId": "s1"}), {"studentId": "s1"}]
    assert recognitions == [item]
    # Asked as another entity, it is still no course: the answer is the one recognition's, as strict as before.
    assert reader.ids_of(COURSE, item) is None
    assert recognitions == [item]


async def test_an_equal_item_read_again_is_recognised_again_and_so_is_one_after_a_write(
    recognitions: list[Mapping[str, Any]],
) -> None:
    assert STUDENT is not None
    reader = _reader()
    item = {"PK": "STU#s1", "SK": "PROFILE"}
    again = dict(item)
    reader.ids_of(STUDENT, item)
    reader.ids_of(STUDENT, again)
    assert [one is item for one in recognitions] == [True, False]
    reader.forget()
    reader.ids_of(STUDENT, item)
    assert len(recognitions) == 3


async def test_an_item_of_unknown_shape_stays_unrecognised_and_is_parsed_once(
    recognitions: list[Mapping[str, Any]],
) -> None:
    assert STUDENT is not None
    reader = _reader()
    unknown = {"PK": "STU#s1", "SK": "NOTHING#1"}
    assert reader.recognised(unknown) is None and reader.recognised(unknown) is None
    assert reader.ids_of(STUDENT, unknown) is None
    assert recognitions == [unknown]


async def test_a_reader_is_freed_when_let_go_of_without_the_garbage_collector() -> None:
    """A reader and its loader hold no cycle: what a request (or a subscription event) read goes with it at once."""
    gc.collect()
    gc.disable()
    try:
        reader = _reader()
        gone = weakref.ref(reader)
        del reader
        assert gone() is None
    finally:
        gc.enable()
