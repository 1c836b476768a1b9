"""The tidy_lexical pass: a lexical index that writes left in several segments is merged into
one, and searches read the same rows with the same scores from it."""

from __future__ import annotations

import pytest

from memory import lexical
from memory.lexical.sqlite_fts5 import TIDY_SEGMENTS, Fts5Lexical
from tests.consolidation.support import activate, fresh_scope, remember, run_pass

pytestmark = pytest.mark.django_db


def _filled(scope: str, count: int) -> None:
    opened = activate(scope, "note the services")
    for i in range(count):
        # one remember, one write of the index: a segment each until automerge steps in
        remember(scope, opened["session_id"], f"The billing queue {i} retries failed requests")


def test_it_merges_an_index_of_several_segments_into_one_with_the_same_searches():
    fts = Fts5Lexical()
    scope = fresh_scope()
    _filled(scope, TIDY_SEGMENTS)
    held = fts.segments("memory")
    assert held >= TIDY_SEGMENTS
    before = lexical.search("memory", "billing queue retries", [scope], 50)
    frequencies = lexical.document_frequencies("memory", ["billing", "queue"], [scope])
    assert run_pass("tidy_lexical") == {"memory_segments_merged": held}
    assert fts.segments("memory") == 1
    assert lexical.search("memory", "billing queue retries", [scope], 50) == before
    assert lexical.document_frequencies("memory", ["billing", "queue"], [scope]) == frequencies
    assert len(before) == TIDY_SEGMENTS
    # merged already: nothing to do
    assert run_pass("tidy_lexical") == {}


def test_it_leaves_an_index_of_fewer_segments_as_it_is():
    fts = Fts5Lexical()
    _filled(fresh_scope(), 1)
    held = fts.segments("memory")
    if held >= TIDY_SEGMENTS:  # the tests before left more: merge them first
        run_pass("tidy_lexical")
        _filled(fresh_scope(), 1)
        held = fts.segments("memory")
    assert 1 <= held < TIDY_SEGMENTS
    assert run_pass("tidy_lexical") == {}
    assert fts.segments("memory") == held
