"""`slowave explain ctx_…|rec_…`: why each item of a retrieval ranks where it does, in the
terminal (a rich table) or as JSON; the explanation itself is memory.selectors.explain's."""

from __future__ import annotations

from typing import Any

from memory.management.commands._common import SlowaveCommand
from memory.selectors import ExplainedItem, RetrievalExplanation, retrieval_explain


class Command(SlowaveCommand):
    help = (
        "Explain a retrieval: each item's rank, score and every ranking signal's contribution. "
        "By default page one in full and whatever later pages the agent was shown."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("retrieval_id", help="ctx_… (activate) or rec_… (recall)")
        parser.add_argument(
            "--all",
            action="store_true",
            dest="all_items",
            help="also the catalogued items of later pages the agent never paged to",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        explanation = retrieval_explain(
            retrieval_id=options["retrieval_id"], all_items=options["all_items"]
        )
        if self.as_json:
            self.emit({"ok": True, "data": explanation.as_data()})
        else:
            self._print(explanation)

    def _print(self, e: RetrievalExplanation) -> None:
        from rich import box
        from rich.table import Table

        console = self.console()
        console.print(
            f"[bold]{e.retrieval_id}[/] · {e.kind} · {e.scope} · {e.created_at:%Y-%m-%d %H:%M:%S}"
            f" · policy {e.policy_version}"
        )
        # Newlines in a cue split its facets; on one line they read as " / ".
        console.print("cue: " + " / ".join(e.cue.splitlines()), markup=False)
        pages = f"{e.pages} page{'s' if e.pages != 1 else ''}"
        console.print(f"{e.catalogued} catalogued on {pages}, {e.exposed} shown to the agent")
        if len(e.facets) > 1:
            for index, facet in enumerate(e.facets):
                console.print(f"  facet {index}: {facet}", markup=False)
        table = Table("#", "item", "score", "contributions", box=box.SIMPLE_HEAD, show_lines=True)
        for item in e.items:
            table.add_row(
                str(item.rank),
                _item(item),
                "—" if item.score is None else f"{item.score:.3f}",
                _why(item, several_facets=len(e.facets) > 1),
            )
        console.print(table if e.items else "The catalog is empty: nothing passed the floor.")
        if e.signal_names:
            console.print("signals, in the order ranking applies them:")
        for name, meaning in e.signal_meanings.items():
            console.print(f"  [bold]{name}[/]: {meaning}")
        left_out = e.catalogued - len(e.items)
        if left_out:
            console.print(
                f"{left_out} more catalogued item{'s' if left_out != 1 else ''} never shown to "
                f"the agent; --all lists them."
            )


def _item(item: ExplainedItem) -> str:
    """Ref, pathway and whether the agent was shown it, one per line."""
    pathway = item.pathway if item.currency == "current" else f"{item.pathway}, {item.currency}"
    return "\n".join((item.ref, pathway, f"page {item.page + 1}" if item.exposed else "not shown"))


def _why(item: ExplainedItem, *, several_facets: bool) -> Any:
    """The contributions in the order ranking applied them and their sum (a name and its value
    never split across lines), then the item's preview and the feedback it got."""
    from rich.columns import Columns
    from rich.console import Group
    from rich.text import Text

    parts: list[Text] = []
    if item.shape == "signals":
        for c in item.signals:
            style = "green" if c.value >= 0 else "red"
            parts.append(Text.assemble(c.signal, (f" {c.value:+.3f}", style)))
        parts.append(Text(f"= {item.score:.3f}", style="bold"))
    elif item.shape == "associated":
        parts.append(Text(f"edge {item.inputs.get('weight', 0.0):.2f} from {item.parent}"))
        parts.append(Text(f"topical {item.inputs.get('topical', 0.0):.3f}"))
    else:
        parts += [Text(f"{k} {v:.3f}") for k, v in item.inputs.items()]
        parts.append(Text("(recorded before signals were itemised)", style="dim"))
    if several_facets and "facet" in item.inputs:
        parts.append(Text(f"[facet {int(item.inputs['facet'])}]", style="dim"))
    said = f"feedback: {item.feedback.label}" if item.feedback else "feedback: none"
    return Group(
        Columns(parts, padding=(0, 2)),
        Text(item.preview, style="dim"),
        Text(said if item.exposed else "", style="italic"),
    )
