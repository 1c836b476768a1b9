"""Per-facet scores of spec §7.2: coverage, topical, rank fusion, salience prior."""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from memory.text import stem, tokens

RRF_K = 60
RRF_NORM = 2 / (RRF_K + 1)
RRF_WEIGHT = 0.10
SALIENCE_WEIGHT = 0.05
STALE_FACTOR = 0.5
# Calibrated on the LoCoMo development split: query-term coverage orders the admitted items
# (plateau 0.5–1.2); admission still rests on `topical` alone.
COVERAGE_WEIGHT = 0.8


@dataclass
class FacetTerms:
    """A facet's query terms (stemmed) with their idf weights."""

    stems: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(self.stems.values())


def idf(n_items: int, df: int) -> float:
    return math.log(1 + n_items / (1 + df))


def facet_terms(text: str, idf_of: dict[str, float]) -> FacetTerms:
    terms = FacetTerms()
    for token in tokens(text):
        key = stem(token)
        terms.stems[key] = max(terms.stems.get(key, 0.0), idf_of.get(token, 0.0))
    return terms


def coverage(terms: FacetTerms, item_stems: AbstractSet[str]) -> float:
    total = terms.total
    if total <= 0:
        return 0.0
    return sum(w for s, w in terms.stems.items() if s in item_stems) / total


def topical(cos: float, cov: float) -> float:
    return max(cos, 0.5 * cos + 0.5 * cov)


def rrf(dense_rank: int | None, lexical_rank: int | None) -> float:
    total = 0.0
    if dense_rank is not None:
        total += 1 / (RRF_K + dense_rank)
    if lexical_rank is not None:
        total += 1 / (RRF_K + lexical_rank)
    return total / RRF_NORM


def salience_prior(salience: float) -> float:
    return math.log(1 + salience) / math.log(21)


def combined(
    *,
    topical_score: float,
    rrf_score: float,
    salience: float,
    temporal: float,
    scope_factor: float,
    stale: bool,
    coverage_score: float = 0.0,
) -> float:
    base = (
        topical_score
        + COVERAGE_WEIGHT * coverage_score
        + RRF_WEIGHT * rrf_score
        + SALIENCE_WEIGHT * salience_prior(salience)
        + temporal
    )
    return base * scope_factor * (STALE_FACTOR if stale else 1.0)
