"""Query terms of spec §7.2: light-stemmed terms with idf weights, and their coverage of an item.

The score terms built from them live in signals.py, their weights in policy.py.
"""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from memory.text import snowball, stem, tokens


@dataclass
class FacetTerms:
    """A facet's query terms (stemmed) with their idf weights."""

    stems: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(self.stems.values())


def idf(n_items: int, df: int) -> float:
    return math.log(1 + n_items / (1 + df))


def facet_terms(text: str, idf_of: dict[str, float], *, full: bool = False) -> FacetTerms:
    """`full`: Snowball stems (memory.text.stems must be read with the same rule)."""
    terms = FacetTerms()
    rule = snowball if full else stem
    for token in tokens(text):
        key = rule(token)
        terms.stems[key] = max(terms.stems.get(key, 0.0), idf_of.get(token, 0.0))
    return terms


def coverage(terms: FacetTerms, item_stems: AbstractSet[str]) -> float:
    """The share of the terms' weight the item holds (read for every candidate and facet:
    the same sums as `total`'s, without its call and a generator)."""
    weights = terms.stems
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum([w for s, w in weights.items() if s in item_stems]) / total
