"""Make the ONNX export of the embedding model where this installation serves it from.

`slowave embedder export` and `slowave setup` call this in their own process (it imports
torch there); a serving process that finds no export makes it in a child process instead
(`memory.embedders.serving`).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from memory.embedders.export import onnx_export, torch_installed
from memory.embedders.export_files import ExportStatus, export_status
from memory.embedders.serving import source_path


def embedder_export_status(*, verify: bool = False) -> ExportStatus:
    return export_status(
        source=source_path(settings.SLOWAVE_EMBEDDING_MODEL),
        model_dir=settings.SLOWAVE_MODEL_DIR,
        verify=verify,
    )


def embedder_export(
    *, force: bool = False, announce: Callable[[str], None] | None = None
) -> tuple[ExportStatus, bool]:
    """The export's status afterwards, and whether this call made it. Raises ExportFailed."""
    status = embedder_export_status()
    if status.fresh and not force:
        return status, False
    if announce is not None:
        announce(
            f"Exporting the embedding model to ONNX in {status.directory} "
            f"({'--force' if status.fresh else status.reason}); "
            + (
                "this imports torch once, ~20-60 s"
                if torch_installed()
                else "built from the model's weights without torch, ~20 s"
            )
        )
    source = source_path(settings.SLOWAVE_EMBEDDING_MODEL)
    return onnx_export(source=source, model_dir=settings.SLOWAVE_MODEL_DIR, force=force), True
