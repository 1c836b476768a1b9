"""Reads (house style: selectors), for the admin, the CLI and the REST read routes.

Nothing here writes and nothing here creates a Retrieval or Exposure: inspecting memory must
never look like an agent having been shown it. Writes live in memory/services/.

inspection.py: evidence chains, retrieval and session detail, any row by public id.
stats.py: counts by entity and status (scope_stats), and the dashboard's series.
explain.py: why each item of a retrieval ranks where it does (its recorded signals).
listings.py: rows by id and filtered, paged lists for `GET /api/...`.
feedback.py: the feedback a session still owes (commit preflight, session detail), and a
procedure's track record (helped / no effect / harmed, for its admin page).
"""

from __future__ import annotations

from memory.selectors.explain import (
    SIGNAL_MEANINGS,
    ExplainedItem,
    RetrievalExplanation,
    retrieval_explain,
)
from memory.selectors.inspection import (
    STAGE_NAMES,
    evidence_as_data,
    feedback_by_target,
    feedback_label,
    generalization_evidence,
    memory_evidence,
    memory_get,
    object_by_ref,
    record_of,
    retrieval_detail,
    session_detail,
)
from memory.selectors.listings import (
    Listing,
    memory_list,
    procedure_get,
    procedure_list,
    retrieval_get,
    session_get,
    session_list,
)
from memory.selectors.stats import scope_stats

__all__ = [
    "SIGNAL_MEANINGS",
    "STAGE_NAMES",
    "ExplainedItem",
    "Listing",
    "RetrievalExplanation",
    "evidence_as_data",
    "feedback_by_target",
    "feedback_label",
    "generalization_evidence",
    "memory_evidence",
    "memory_get",
    "memory_list",
    "object_by_ref",
    "procedure_get",
    "procedure_list",
    "record_of",
    "retrieval_detail",
    "retrieval_explain",
    "retrieval_get",
    "scope_stats",
    "session_detail",
    "session_get",
    "session_list",
]
