"""Passages: the sentences of a longer memory, embedded one by one beside the whole text.

One vector for a memory of several sentences blurs them: a question about one sentence meets a
mean of all of them. Each passage of such a memory gets its own vector in the `passage` index
kind (memory.indexing writes it), keyed by `memory_pk * KEY_SPAN + ordinal`, and ranking reads
a memory's cosine as the best of its whole-text and passage cosines. A memory of one sentence
has no passages.

A short leading label (`Caroline: `, `Decision: `) belongs to every sentence after it, so each
passage carries it; a bracketed note (`[image: …]`) is a passage of its own.

A remember call embeds only the first `REMEMBER_PASSAGES` passages beside the whole text, so its
latency does not grow with the length of a memory; a memory with more keeps
`passages_complete` False and the embeddings backfill pass (consolidation.services.backfill)
embeds the rest, appending to the same matrix under the next ordinals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from memory import embeddings

KEY_SPAN = 64
MAX_PASSAGES = 32
# Passages a remember call embeds itself; the backfill pass embeds any beyond (see above).
REMEMBER_PASSAGES = 3
# ...and at most this many over all its memories: a 512-turn batch of short chat turns encoded
# 1,826 texts (each turn of 2-3 sentences is 3-4 texts), 78 % of the call's time; with the cap,
# 576, and the backfill embeds the rest as it does for long memories.
REMEMBER_CALL_PASSAGES = 64
# A one-word sentence joins its neighbour: alone it matches too much ("Thanks!", "Yes.").
MIN_WORDS = 2
LABEL_RE = re.compile(r"^([A-Za-z][\w'.-]*(?: [\w'.-]+){0,2}):\s+")
# A whitespace run ends a passage when it holds a newline, comes before `[`, or follows
# sentence punctuation and comes before a quote, bracket, capital or digit. Each run is looked
# at once (one `\s+` scan of the text), so the split is linear: one regex over the whole text
# with `\s*\n` and `\s+(?=\[)` alternatives rescanned a long run from each of its characters,
# quadratic in its length (8,000 spaces took seconds).
WHITESPACE_RUN_RE = re.compile(r"\s+")
SENTENCE_END = frozenset(".!?")
SENTENCE_START_RE = re.compile(r"[\"'(\[A-Z0-9]")


NONE = np.zeros((0, embeddings.DIMENSIONS), dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Embedded:
    """A memory's whole-text vector and its passage vectors (0 rows for one sentence);
    `complete` is False when only the leading passages are embedded yet."""

    vector: np.ndarray
    passages: np.ndarray
    complete: bool = True


def split(content: str) -> list[str]:
    """The passages of a memory, label included; [] when the content is one passage."""
    match = LABEL_RE.match(content)
    label, body = (match.group(0), content[match.end() :]) if match else ("", content)
    # Fragments joined into each passage, kept as lists: joining as we go copies the text
    # again for each fragment.
    pieces: list[list[str]] = []
    for piece in _between_boundaries(body):
        piece = piece.strip()
        if not piece:
            continue
        # A passage of several fragments has two words or more: only a lone fragment is short.
        last_short = bool(pieces) and len(pieces[-1]) == 1 and _short(pieces[-1][0])
        if pieces and (_short(piece) or last_short) and not piece.startswith("["):
            pieces[-1].append(piece)
        else:
            pieces.append([piece])
    return _labelled(label, [" ".join(joined) for joined in pieces])


def _labelled(label: str, pieces: list[str]) -> list[str]:
    if len(pieces) < 2:
        return []
    if len(pieces) > MAX_PASSAGES:
        pieces[MAX_PASSAGES - 1 :] = [" ".join(pieces[MAX_PASSAGES - 1 :])]
    return [f"{label}{piece}" for piece in pieces]


def _between_boundaries(body: str) -> list[str]:
    """`body` cut at each whitespace run that ends a passage (the run itself dropped)."""
    cuts: list[str] = []
    start = 0
    for run in WHITESPACE_RUN_RE.finditer(body):
        begin, end = run.span()
        after = body[end : end + 1]
        if (
            "\n" in run.group()
            or after == "["
            or (begin > 0 and body[begin - 1] in SENTENCE_END and SENTENCE_START_RE.match(after))
        ):
            cuts.append(body[start:begin])
            start = end
    cuts.append(body[start:])
    return cuts


def _short(text: str) -> bool:
    return len(text.split()) < MIN_WORDS


def encode(
    contents: list[str], *, limit: int | None = None, total: int | None = None
) -> list[Embedded] | None:
    """Whole-text and passage vectors for every content in one encoder call (`limit`: at most
    that many leading passages each, `total`: at most that many in all, the earlier contents
    first); None when the model is unavailable (the rows stay lexical-only until the backfill
    pass)."""
    return _encode(contents, None, limit=limit, total=total)


def encode_whole(texts: list[str]) -> list[Embedded] | None:
    """Whole-text vectors only, for the kinds without passages (episodes, procedures)."""
    vectors = embeddings.encode(texts)
    return None if vectors is None else [Embedded(vector, NONE) for vector in vectors]


def encoder_for(kind: str):
    return encode if kind == "memory" else encode_whole


def columns(kind: str, item: Embedded) -> dict[str, bytes | bool]:
    """The model columns that store an embedded row of a vector kind."""
    out: dict[str, bytes | bool] = {"embedding": embeddings.to_blob(item.vector)}
    if kind == "memory":
        out["passages"] = to_blob(item.passages)
        out["passages_complete"] = item.complete
    return out


def encode_known(contents: list[str], vectors: list[np.ndarray]) -> list[Embedded] | None:
    """The passages of contents whose whole-text vectors are already known."""
    return _encode(contents, vectors)


def encode_rest(contents: list[str], done: list[int]) -> list[np.ndarray] | None:
    """The vectors of each content's passages from ordinal `done[i]` on (0 rows when none
    remain); None when the model is unavailable. Background work: it steps aside, batch by
    batch, for any other encode (a remember or recall in the same process)."""
    groups = [split(content)[start:] for content, start in zip(contents, done, strict=True)]
    flat = [p for group in groups for p in group]
    vectors = embeddings.encode(flat, yielding=True) if flat else NONE
    if vectors is None:
        return None
    out: list[np.ndarray] = []
    start = 0
    for group in groups:
        out.append(vectors[start : start + len(group)])
        start += len(group)
    return out


def _encode(
    contents: list[str],
    known: list[np.ndarray] | None,
    *,
    limit: int | None = None,
    total: int | None = None,
) -> list[Embedded] | None:
    groups = [split(content) for content in contents]
    kept = groups if limit is None else [group[:limit] for group in groups]
    if total is not None:
        room, capped = total, []
        for group in kept:
            capped.append(group[:room])
            room -= len(capped[-1])
        kept = capped
    flat = [p for group in kept for p in group]
    vectors = embeddings.encode(flat if known is not None else [*contents, *flat])
    if vectors is None:
        return None
    wholes = known if known is not None else vectors[: len(contents)]
    start = 0 if known is not None else len(contents)
    out: list[Embedded] = []
    for whole, group, part in zip(wholes, groups, kept, strict=True):
        out.append(Embedded(whole, vectors[start : start + len(part)], len(part) == len(group)))
        start += len(part)
    return out


def to_blob(passages: np.ndarray) -> bytes:
    return np.ascontiguousarray(passages, dtype=np.float32).tobytes()


def from_blob(blob: bytes | memoryview | None) -> np.ndarray | None:
    """The passage matrix of a memory; None when it has none (or they are not computed yet)."""
    if not blob:
        return None
    return np.frombuffer(bytes(blob), dtype=np.float32).reshape(-1, embeddings.DIMENSIONS)


def key(memory_pk: int, ordinal: int) -> int:
    return memory_pk * KEY_SPAN + ordinal


def owner(passage_key: int) -> int:
    return passage_key // KEY_SPAN
