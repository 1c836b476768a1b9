"""The five verbs' descriptions: the user interface an agent reads before calling (spec §6.9).

The MCP tool list shows them as tool descriptions (memory.verbs holds them for both adapters).

Each says what the tool returns, when to call it, what to call next and how to recover from
each error code. Every reply is an envelope: {"ok": true, "data": {...}} or
{"ok": false, "error": {code, message, retryable, field_errors?, outstanding?}}.
"""

from __future__ import annotations

from memory.passages import MAX_PASSAGES, REMEMBER_CALL_PASSAGES, REMEMBER_PASSAGES


def _budget(items: str) -> str:
    return (
        f"Optional `max_tokens` (256-16,384) caps each page: the {items} shown count as their "
        "JSON characters / 4, the estimate accessible_field.approx_extra_tokens uses. Items "
        "keep rank order and a page takes them while they fit; the rest wait behind "
        "continue_from, which keeps the same budget. A page's first memory too long for the "
        "budget is shown cut, with content_truncated: true and content_chars (its full "
        "length), never skipped; a procedure is never cut.\n"
    )


_ERRORS_COMMON = (
    "Errors: invalid_input (not retryable) - fix the fields named in error.field_errors "
    "(dotted paths such as procedure.steps[0]) and call again; nothing was written and the "
    "session is still usable. storage_busy / internal_error (retryable) - wait a moment and "
    "retry the same call. storage_full (retryable) - the store's disk is full and nothing "
    "was written: tell the user, and retry once space is freed. storage_read_only, "
    "storage_corrupt, storage_missing (the store cannot be written, is damaged, or was "
    "deleted under the server), storage_error, model_export_failed, embedder_mismatch (the "
    "store's vectors are another embedder's) (not retryable) - go on without Slowave for "
    "this task and tell the user to run `slowave doctor`. Over HTTP "
    "only: unauthorized, forbidden, host_not_allowed, origin_not_allowed, "
    "unsupported_media_type (not retryable) - the server refused the caller; tell the user."
)

# Imported turns shown among the memories (issue 25): what they look like, and that no
# feedback is owed for them.
_HISTORY = (
    "In a scope with imported history (slowave import) the memories list may also hold "
    "relevant turns of it, ranked with the memories: {episode_id, type: 'episode', content, "
    "pathway, provenance {source_kind: imported_session, session_id, occurred_at}}. Use them "
    "as context; no feedback is owed for them (they are not memories).\n"
)

ACTIVATE = (
    "Start of every task: call this FIRST, once per task, before doing the work. Opens a new "
    "Slowave session and returns the memories and procedures relevant to the task.\n"
    "Pass `task` verbatim (it is the main retrieval cue), `initial_goal` (what done looks "
    "like) and `scope` as kind:id (e.g. project:checkout-service; for code, the repository's "
    "scope that `slowave scope` prints in the working directory, e.g. "
    "project:github.com/org/repo, the same in every worktree); pass back `continuity_id` "
    "from an earlier activation to link related sessions (it never widens the scope).\n"
    "Returns session_id and retrieval_id (keep both), memories [{memory_id, type, content, "
    "pathway, currency}], procedures (goal, summary, outcome, caveats), warnings, "
    "continuity_id, and more_available/continue_from when the catalogue has further pages. "
    + _HISTORY
    + "memory_state 'cold_start' means the scope holds no memories and no imported history: "
    "read one stable project document, "
    "then slowave_remember only durable facts not otherwise observable, one claim each. A "
    "'historical' memory was superseded; prefer the 'current' one.\n"
    + _budget("memories and procedures")
    + "Next: use what was shown, slowave_remember durable claims as you learn them, "
    "slowave_recall when the question shifts, slowave_feedback on every item shown, and "
    "finish with slowave_commit.\n"
    + _ERRORS_COMMON
    + " A continuity_id that is malformed, unknown, from another scope or client is "
    "invalid_input: omit it to start a new continuity."
)

REMEMBER = (
    "Store durable, standalone claims worth knowing in a future task: facts, preferences, "
    "decisions, constraints, instructions, lessons, warnings, open questions, tasks, "
    "artifacts. Not for progress notes or things anyone can re-read from the code or docs. "
    "One claim per memory, phrased to make sense without this conversation.\n"
    "Give `scope` and `session_id` from slowave_activate, then EITHER `content` + `type` "
    "(+ `occurred_at`, RFC 3339 with offset, when the claim describes a dated event) OR "
    "`memories`: a list of up to 256 {content, type, occurred_at?} - never both forms.\n"
    "Returns {stored, memory_id, disposition: created|matched, type, scope, "
    "source_event_id}; 'matched' means the same claim already existed and was reinforced. "
    "The batch form returns results[] in order, each ok with data or an error "
    "(storage_error affects only that item: retry just that item).\n"
    "A stored memory is searchable at once by its whole text and its words; of a memory "
    f"longer than {REMEMBER_PASSAGES} sentences the call embeds the first {REMEMBER_PASSAGES} "
    f"one by one ({REMEMBER_CALL_PASSAGES} in all for a batch) and background consolidation "
    f"the rest (up to {MAX_PASSAGES} each), so a long memory costs the call no more than a "
    "short one.\n"
    "Never put credentials in a memory: content holding one (a private key, a cloud or Git "
    "host token, a JWT, a password in a URL, API_KEY=… ) is refused with invalid_input "
    "naming the field and the kind, unless the server redacts them (then data.redacted "
    "counts what was replaced).\n"
    "Next: carry on with the task; remembered items are available to later activations.\n"
    + _ERRORS_COMMON
    + " 'unknown session_id' or 'session is already ended' - call slowave_activate to open "
    "a new session. 'session_id and scope do not match' - use the scope the session was "
    "activated with."
)

RECALL = (
    "Mid-task lookup: call only when the question shifts to something slowave_activate did "
    "not cover, with `session_id`, the session's `scope` and a focused `query`. Optional "
    "`task_context` (merged into the session), `semantic_context`, and `evidence: full` to "
    "include evidence text.\n"
    "Returns retrieval_id (a new one to give feedback on), memories (direct, then "
    "associated), procedures with steps and caveats, evidence references, and "
    "more_available/continue_from. "
    + _HISTORY
    + "For the next page call again with ONLY session_id, scope "
    "and continue_from (no query, task_context or full evidence); a cursor always replays "
    "the same page. accessible_field says how much more exists without showing it.\n"
    + _budget("memories, procedures and evidence")
    + "Next: use the results, then slowave_feedback on every item shown under this "
    "retrieval_id.\n"
    + _ERRORS_COMMON
    + " 'unknown session_id' or 'session is already ended' - call slowave_activate to open "
    "a new session. 'session_id and scope do not match' - use the session's own scope. "
    "continue_from errors ('unknown ... cursor', 'does not match') - start over with a query."
)

FEEDBACK = (
    "Assess what a retrieval showed you. Cover every memory and procedure shown (all pages) "
    "before slowave_commit; feedback is append-only and may be refined later (the latest "
    "entry wins).\n"
    "Give `retrieval_id` (ctx_... from activate or rec_... from recall) with "
    "`memory_feedback`: [{memory_id, assessment: used|irrelevant|stale, effect?: "
    "helped|no_effect|harmed (only for used), stale_reason?: contradicted|superseded|"
    "outdated|unsupported|withdrawn, replacement_memory_id? (required for superseded), "
    "reason? (required for stale)}] and `procedure_feedback`: [{procedure_id, use: "
    "used|not_used, effect?: helped|no_effect|harmed|unknown, contribution? (required when "
    "used)}]. Set `coverage: complete` once every shown item is assessed; `missing` lists "
    "what you needed but did not get. Several retrievals at once: `items`, one record each.\n"
    "Returns accepted_event_ids, rejected [{target_id, reason}], outstanding {memory_ids, "
    "procedure_ids} still unassessed, and applied learning counts. A rejected entry is not "
    "an error: read its reason (e.g. target_not_exposed - only items this retrieval showed "
    "can be assessed; used_procedure_requires_contribution), fix that entry and resend it.\n"
    "Next: send feedback for anything still in `outstanding`, then slowave_commit.\n"
    + _ERRORS_COMMON
    + " not_found (unknown retrieval_id) - use a retrieval_id returned by slowave_activate or "
    "slowave_recall in this session; nothing was written."
)

COMMIT = (
    "End of every task: close the session with an honest outcome. Give `session_id`, "
    "`final_goal`, `outcome` (success|partial|failure - report failure truthfully, it "
    "becomes a cautionary lesson), `outcome_summary`, and `verification` {status: "
    "verified|partially_verified|unverified, summary, evidence_refs?}. Optional `procedure` "
    "{summary, steps: [{summary}, ...] (objects, not strings), caveats?, context?, goal?, "
    "deduplication_key? (reuse a key to supersede an older procedure)} records how the task "
    "was done for reuse; optional `trajectory` [{kind: action|observation, summary, "
    "status?}] records the key steps.\n"
    "Returns {session_id, committed, operation: closed|updated, outcome, feedback_status, "
    "verification_status, episodes_formed}. Committing a session that was already closed "
    "(e.g. idle-reaped) updates its outcome: operation 'updated', already_ended true.\n"
    "Text holding a credential (summary, steps, verification…) is refused like a remember "
    "of one (invalid_input naming the field), or redacted when the server is set to.\n"
    "Next: nothing; call slowave_activate for the next task.\n"
    + _ERRORS_COMMON
    + " incomplete_feedback (retryable) - feedback is missing for items shown: send the "
    "feedback listed in error.outstanding (per retrieval_id: memory_ids, procedure_ids, and "
    "coverage 'complete' when coverage_declared_complete is false) with slowave_feedback, "
    "then retry this commit unchanged. 'unknown session_id' - check the id returned by "
    "slowave_activate."
)
