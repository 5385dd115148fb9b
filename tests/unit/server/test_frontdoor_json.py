"""The front door's JSON check: nesting past ``MAX_NESTING`` is refused at the same depth whether or not the text
holds escapes that must be checked, and a list of ids passes as any other value does."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.server.frontdoor import MAX_NESTING, Rejected, check_json

ESCAPED = '"\\ud83d\\ude00"'
"""Text with an escaped surrogate pair: the check then reads every string as well as the nesting."""


def _nested(levels: int, bottom: Any) -> Any:
    value = bottom
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("text", ["[]", ESCAPED], ids=["plain", "escaped"])
@pytest.mark.parametrize("bottom", ["an id", 7, None, [], {}, {"a": "b"}, ["x", "y"]])
def test_json_as_deep_as_allowed_passes_and_one_level_more_is_refused(text: str, bottom: Any) -> None:
    # The outermost value is at depth 0: a list holding another one MAX_NESTING times puts the bottom at its depth.
    inside = 1 if isinstance(bottom, list | dict) and bottom else 0
    check_json(_nested(MAX_NESTING - inside, bottom), text, "the body")
    with pytest.raises(Rejected, match=f"nests deeper than {MAX_NESTING} levels"):
        check_json(_nested(MAX_NESTING - inside + 1, bottom), text, "the body")


@pytest.mark.parametrize("text", ["[]", ESCAPED], ids=["plain", "escaped"])
def test_a_list_of_a_thousand_ids_among_objects_passes(text: str) -> None:
    body = {"query": "{ a }", "variables": {"ids": [f"id-{n}" for n in range(1000)], "deep": [[{"x": [1, 2]}]]}}
    check_json(body, text, "the body")


def test_text_that_is_not_unicode_is_refused_where_it_is_even_in_a_list_of_ids() -> None:
    body = {"variables": {"ids": ["a", "b\ud800", "c"]}}
    with pytest.raises(Rejected) as refused:
        check_json(body, ESCAPED, "the body")
    assert "variables" in str(refused.value)
