"""The tidy_lexical pass: a lexical index that writes left in several segments of like size is
merged into one, and searches read the same rows with the same scores from it; a large segment
with a few small ones beside it is left as it is."""

from __future__ import annotations

import pytest

from memory import lexical
from memory.lexical.sqlite_fts5 import Fts5Lexical
from tests.consolidation.support import activate, fresh_scope, remember, run_pass
from tests.factories import remember as remember_many

pytestmark = pytest.mark.django_db

QUERY = "billing queue retries"


def _one_by_one(scope: str, count: int) -> None:
    opened = activate(scope, "note the services")
    for i in range(count):
        # one remember, one write of the index: a segment each until automerge steps in
        remember(scope, opened["session_id"], f"The billing queue {i} retries failed requests")


def test_it_merges_an_index_of_several_segments_into_one_with_the_same_searches():
    fts = Fts5Lexical()
    scope = fresh_scope()
    _one_by_one(scope, 3)
    held = len(fts.segments("memory"))
    assert held >= 3
    before = lexical.search("memory", QUERY, [scope], 50)
    frequencies = lexical.document_frequencies("memory", ["billing", "queue"], [scope])
    assert run_pass("tidy_lexical") == {"memory_segments_merged": held}
    assert len(fts.segments("memory")) == 1
    assert lexical.search("memory", QUERY, [scope], 50) == before
    assert lexical.document_frequencies("memory", ["billing", "queue"], [scope]) == frequencies
    assert len(before) == 3
    # merged already: nothing to do
    assert run_pass("tidy_lexical") == {}


def test_it_leaves_a_large_segment_with_a_small_one_beside_it():
    fts = Fts5Lexical()
    scope = fresh_scope()
    opened = activate(scope, "note the services")
    filler = [f"The {i} search index worker number {i * 7} logs to Kafka" for i in range(256)]
    remember_many(scope, opened["session_id"], *filler)
    run_pass("tidy_lexical")  # whatever was there before, one segment now
    _one_by_one(scope, 1)
    pages = fts.segments("memory")
    assert len(pages) == 2 and max(pages) >= 0.75 * sum(pages), pages
    assert run_pass("tidy_lexical") == {}
    assert fts.segments("memory") == pages
