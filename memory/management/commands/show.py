"""`slowave show REF`: any id with its evidence chain (memories in full), in the terminal."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from memory.management.commands._common import SlowaveCommand
from memory.models import Memory, Retrieval, Session
from memory.selectors import (
    evidence_as_data,
    memory_evidence,
    object_by_ref,
    record_of,
    retrieval_detail,
    session_detail,
)
from memory.selectors.inspection import MemoryEvidence


class Command(SlowaveCommand):
    help = "Show a memory (sch_N) with its evidence chain, or any id (sess_, ctx_, proc_, ep_…)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "ref", help="sch_N, proc_…, sess_…, ctx_…/rec_…, ep_N, evt_N, pro_N, fbe_…"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ref = options["ref"]
        obj = object_by_ref(ref=ref)
        if obj is None:
            if self.as_json:
                self.emit(
                    {"ok": False, "error": {"code": "not_found", "message": f"not found: {ref}"}}
                )
            raise CommandError(f"not found: {ref}")
        if isinstance(obj, Memory):
            chain = memory_evidence(memory=obj)
            if self.as_json:
                self.emit({"ok": True, "data": evidence_as_data(chain)})
            else:
                self._print_memory(chain)
            return
        data: dict[str, Any] = {"kind": type(obj).__name__.lower(), "record": record_of(obj)}
        if isinstance(obj, Session):
            detail = session_detail(session=obj)
            data["retrievals"] = [
                {"id": r["retrieval"].pk, "exposed": r["exposed"], "gap": r["gap"]}
                for r in detail["retrievals"]
            ]
            data["feedback_complete"] = detail["complete"]
            data["events"] = [record_of(e) for e in detail["events"]]
        if isinstance(obj, Retrieval):
            shown = retrieval_detail(retrieval=obj)
            data["record"].pop("catalog", None)
            data["exposures"] = [
                {
                    "target_id": r["exposure"].target_id,
                    "pathway": r["exposure"].pathway,
                    "rank": r["exposure"].rank,
                    "feedback": r["feedback"],
                }
                for r in shown["rows"]
            ]
        if self.as_json:
            self.emit({"ok": True, "data": data})
        else:
            self._print_record(ref, data)

    def _print_record(self, ref: str, data: dict[str, Any]) -> None:
        from rich.table import Table

        console = self.console()
        table = Table(title=f"{ref} ({data['kind']})", show_header=False)
        for key, value in data["record"].items():
            table.add_row(key, _short(value))
        console.print(table)
        for key in ("exposures", "retrievals"):
            for row in data.get(key, []):
                console.print(
                    f"  {key[:-1]}: " + ", ".join(f"{k}={_short(v)}" for k, v in row.items())
                )
        if "events" in data:
            console.print(
                f"  {len(data['events'])} events; feedback "
                f"{'complete' if data['feedback_complete'] else 'incomplete'}"
            )

    def _print_memory(self, chain: MemoryEvidence) -> None:
        from rich.panel import Panel
        from rich.table import Table

        console, m = self.console(), chain["memory"]
        console.print(
            Panel(
                m.content,
                title=f"{chain['ref']} · {m.type} · {m.status}",
                subtitle=f"{m.scope} · salience {m.salience:.2f} · stage {m.generalization_stage}",
            )
        )
        supports = Table(
            "support", "event", "episode", "session", "scope", title="Where it came from"
        )
        for s in chain["supports"]:
            supports.add_row(
                s["kind"],
                _ref(s["event"], s["event"].content if s["event"] else None),
                _ref(s["episode"]),
                str(s["session"] or "—"),
                s["scope"],
            )
        console.print(supports)
        shown = Table(
            "retrieval", "session", "pathway", "rank", "feedback", title="Shown to agents"
        )
        for e in chain["exposures"]:
            shown.add_row(
                e["retrieval"].pk,
                e["session_id"],
                e["exposure"].pathway,
                str(e["exposure"].rank),
                e["feedback"],
            )
        console.print(shown if chain["exposures"] else "Never shown to an agent.")
        g = chain["generalization"]
        console.print(
            f"Generalization: stage {g['stage']} ({g['stage_name']}); evidence scopes "
            f"{', '.join(g['evidence_scopes'])} over {g['evidence_sessions']} session(s)"
        )
        links = {
            "superseded by": chain["superseded_by"],
            "duplicate of": chain["duplicate_of"],
            "supersedes": ", ".join(map(str, chain["supersedes"])) or None,
        }
        for label, value in links.items():
            if value:
                console.print(f"{label}: {value}")
        for f in chain["forget_log"]:
            console.print(
                f"{f.created_at:%Y-%m-%d %H:%M} {f.action} {f.prior_status}→{f.new_status} "
                f"by {f.actor}: {f.reason}"
            )


def _ref(obj: Any, text: str | None = None) -> str:
    if obj is None:
        return "—"
    return f"{obj} {_short(text, 60)}" if text else str(obj)


def _short(value: Any, limit: int = 100) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"  # salience, weights: 0.90 for people, not 0.8999999999999999
    text = "—" if value is None or value == "" else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
