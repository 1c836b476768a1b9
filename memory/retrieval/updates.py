"""Which admitted items are older versions of newer ones (signals.superseded, policy.supersession).

Two items are versions of one claim when the cue finds them through the same query terms and
their best-matching sentences say nearly the same thing. Whole-text cosine was too blunt for
both halves of that test: two turns of one conversation on one subject are close as wholes
without one replacing the other, and an instruction restated with a new value ("function names
now start with 'gn_'") is only 0.57 from the old one as a whole, 0.76 at its best sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from memory import passages
from memory.retrieval import speakers
from memory.retrieval.candidates import MemoryRow
from memory.retrieval.policy import Supersession
from memory.retrieval.scored import Cue, Scored
from memory.text import stems

# Words by which a correction says it is one ("from now on", "instead", "no longer", "we
# switched to"). Two lines alike in a conversation usually just return to a subject; a line
# that replaces an earlier one usually says so. Not "new" or "latest": "inspiration for new
# cocktails" describes, it does not correct (it cost a LongMemEval pooled preference question).
_CHANGE = re.compile(
    r"\b(?:now|from now on|going forward|moving forward|from here on|henceforth|instead|"
    r"rather than|no longer|any ?more|chang(?:e|ed|es|ing)|switch(?:ed|es|ing)?|"
    r"updat(?:e|ed|es|ing)|revis(?:e|ed|es|ing)|replac(?:e|ed|es|ing)|these days)\b",
    re.IGNORECASE,
)


# Words by which a line gives an instruction ("I want you to end them with '_a'", "please
# start the name with 'y_'"): a standing instruction is the latest word on its subject, whether
# or not it says that it replaces one.
_DIRECTIVE = re.compile(
    r"\b(?:i (?:want|need) you to|i'?d like you to|please|make sure|ensure|"
    r"from today|starting today)\b",
    re.IGNORECASE,
)


def says_it_changes(text: str) -> bool:
    return _CHANGE.search(text) is not None


def gives_instruction(text: str) -> bool:
    return _DIRECTIVE.search(text) is not None


def moment(row: MemoryRow) -> datetime:
    return row.occurred_at or row.created_at


def sentences(item: Scored[MemoryRow]) -> np.ndarray | None:
    """The item's whole-text vector with its passage vectors, one row each."""
    if item.vector is None:
        return None
    parts = passages.from_blob(item.obj.passages)
    return item.vector[None, :] if parts is None else np.vstack([item.vector[None, :], parts])


def cue_weights(cue: Cue, fold_e: bool = False) -> dict[str, float]:
    """Every query term of the cue with its largest idf weight over the facets."""
    weights: dict[str, float] = {}
    for terms in cue.terms:
        for term, weight in terms.stems.items():
            term = folded(term) if fold_e else term
            weights[term] = max(weights.get(term, 0.0), weight)
    return weights


def folded(term: str) -> str:
    """A stem without its final "e" (five letters or more), so that the light rule's
    "variable" meets its "variabl" (from "variables") and "change" its "chang"."""
    return term[:-1] if len(term) >= 5 and term.endswith("e") else term


def held_terms(text: str, weights: dict[str, float], full: bool, fold_e: bool) -> frozenset[str]:
    """The cue terms (`weights`' keys) the text holds."""
    found = stems(text, full=full)
    return frozenset(weights) & (frozenset(map(folded, found)) if fold_e else found)


def holdings(
    items: Sequence[Scored[MemoryRow]],
    chosen: Sequence[int],
    cue: Cue,
    rule: Supersession,
    full_stems: bool,
) -> tuple[dict[str, float], dict[int, frozenset[str]]]:
    """The cue's term weights, and the cue terms each chosen item (by index) holds."""
    weights = cue_weights(cue, rule.fold_e)
    held = {i: held_terms(items[i].obj.content, weights, full_stems, rule.fold_e) for i in chosen}
    return weights, held


def same_terms(a: frozenset[str], b: frozenset[str], weights: dict[str, float]) -> float:
    """Idf-weighted Jaccard of the cue terms two items contain (0 when neither has one)."""
    union = sum(weights[t] for t in a | b)
    return sum(weights[t] for t in a & b) / union if union > 0 else 0.0


def versions(
    items: Sequence[Scored[MemoryRow]], cue: Cue, rule: Supersession, full_stems: bool
) -> list[list[int]]:
    """For each of the first `rule.depth` items (by index), the indices of the newer items it
    is an older version of (empty for the rest). With `rule.marked` the newer one must say it
    changes something (_CHANGE) or, holding the cue's terms as the older one does (≥
    directive_terms), give an instruction (_DIRECTIVE, with `rule.directives`). Both must hold
    at least `min_coverage` of the cue's terms: two lines that share one common word of it
    ("how's it going?") are chat, not versions of a claim the cue asks about."""
    found: list[list[int]] = [[] for _ in items]
    top = [
        i
        for i in sorted(range(len(items)), key=lambda i: -items[i].score)[: rule.depth]
        if items[i].inputs.get("coverage", 0.0) >= rule.min_coverage
    ]
    weights, held = holdings(items, top, cue, rule, full_stems)
    vectors = {i: sentences(items[i]) for i in top}
    marked = {i: says_it_changes(items[i].obj.content) for i in top}
    instructs = {i: rule.directives and gives_instruction(items[i].obj.content) for i in top}
    for a in top:
        for b in top:
            if a == b or not moment(items[a].obj) < moment(items[b].obj):
                continue
            if rule.marked and not (marked[b] or instructs[b]):
                continue
            va, vb = vectors[a], vectors[b]
            if va is None or vb is None:
                continue
            if rule.same_speaker and speakers.speaker(items[a].obj.content) != speakers.speaker(
                items[b].obj.content
            ):
                continue
            bar = rule.same_terms if marked[b] or not rule.marked else rule.directive_terms
            if same_terms(held[a], held[b], weights) < bar:
                continue
            if float(np.max(va @ vb.T)) >= rule.sentence_cosine:
                found[a].append(b)
    return found


def with_session_mates(
    found: list[list[int]],
    items: Sequence[Scored[MemoryRow]],
    cue: Cue,
    rule: Supersession,
    full_stems: bool,
) -> list[list[int]]:
    """`found` with each older version's session-mates among the first `depth` items that
    hold the same cue terms (≥ mate_terms) placed under the same newer versions: once a
    session's claim is replaced, what else that session said on it (the listener's echo, the
    talk around it) is of the older state too."""
    near = sorted(range(len(items)), key=lambda i: -items[i].score)[: rule.depth]
    weights, held = holdings(items, near, cue, rule, full_stems)
    out = [list(newer) for newer in found]
    for a, newer in enumerate(found):
        session = items[a].obj.session_id
        if not newer or session is None or a not in held:
            continue
        for c in near:
            if c == a or items[c].obj.session_id != session:
                continue
            if same_terms(held[a], held[c], weights) < rule.mate_terms:
                continue
            out[c].extend(
                b for b in newer if b not in out[c] and items[b].obj.session_id != session
            )
    return out
