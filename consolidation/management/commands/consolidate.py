"""`slowave consolidate [--scope kind:id] [--json]`: passes 1-8 inline (spec §8.3, §11)."""

from __future__ import annotations

from consolidation.management.commands._shared import PassCommand, passes_run_shown, report
from consolidation.services.passes import CONSOLIDATION_PASSES


class Command(PassCommand):
    help = (
        "Run consolidation passes 1-8 once (episodes, embeddings, prototypes, memories, "
        "associations, reinforcement, duplicates, promotion)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--scope", help="only this scope (kind:id); default every scope")
        parser.add_argument("--json", action="store_true", help="machine-readable output")

    def handle(self, *args, **options) -> None:
        results = passes_run_shown(
            specs=CONSOLIDATION_PASSES, scope=options["scope"] or None, as_json=options["json"]
        )
        report(self, results, as_json=options["json"])
