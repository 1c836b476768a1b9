"""A serving process made ready for its first calls before they arrive (spec §6.1's window).

Lives here: loading the embedding model, bringing the vector index's in-process copy up to
date (sqlite-vec's all-scope copy, numpy's matrix) and handing the heap's leftovers back,
once, in a thread of the caller's. Does not live here: when to start it (mcp_serve starts it
before it imports the MCP SDK, `slowave up` after its migrations, each of its server processes
as it starts), the embedder and the copies themselves (memory.embeddings,
memory.vectors).

Why: an agent's first activate waited for the model (~0.3 s), and its first remember read the
whole vector table into the copy inside its write transaction (2.0 s of CPU at 10,000 memories on
a loaded machine, against 0.27 s for the same read outside one). Both spend most of their time in C with the GIL
released, so on a second core they overlap the SDK's import instead of following it.
"""

from __future__ import annotations

import logging
import threading

import numpy as np
from django.db import DatabaseError, close_old_connections, connection

from memory.embedders.base import release_memory
from memory.embeddings import DIMENSIONS, encode
from memory.errors import EmbedderMismatch
from memory.vectors import get_index

logger = logging.getLogger(__name__)


def serving_warm_up() -> None:
    """Load the model, catch the memory vectors' copy up, then return freed heap to the
    system. Never raises: whatever it could not do, the first call that needs it does."""
    try:
        encode(["warm up"])  # loads the model; None (lexical only) is the caller's to see
        _catch_up_vectors()
        logger.debug("warm-up done: model loaded, vector copy caught up")
    except EmbedderMismatch as exc:  # every call that embeds answers the same error
        logger.error("slowave: %s", exc.message)
    except Exception as exc:  # a warm-up must not take the server down
        logger.warning("warm-up stopped early: %s", exc)
    finally:
        connection.close()  # this thread's own connection; the calls have theirs
    release_memory()


def serving_warm_up_in_background() -> threading.Thread:
    """The warm-up in a thread of its own (with its own database connection), started."""
    thread = threading.Thread(target=serving_warm_up, name="slowave-warm-up", daemon=True)
    thread.start()
    return thread


def _catch_up_vectors() -> None:
    close_old_connections()
    try:
        # A search with no query vectors: the copy catches up on the table and answers nothing.
        get_index().knn_all_scopes_many("memory", np.zeros((0, DIMENSIONS), np.float32), 1)
    except DatabaseError as exc:  # a store not migrated yet: the first remember reads it
        logger.debug("vector copy not warmed: %s", exc)
