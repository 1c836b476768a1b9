"""People's controls over memory (spec §10): forget, unforget, reactivate, reset generalization.

Every change writes a ForgetLog row; evidence is never deleted. Agents have no path here: no MCP
tool calls these services, only the admin, the CLI and staff REST routes do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction

from memory.errors import InvalidInput, NotFound
from memory.ids import memory_pk, memory_ref
from memory.models import ForgetLog, Memory, Procedure

REASON_MAX = 500


@dataclass
class ControlResult:
    """What a control did: `changed` is False for an idempotent repeat."""

    ref: str
    action: str
    prior_status: str
    new_status: str
    changed: bool
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.ref,
            "action": self.action,
            "prior_status": self.prior_status,
            "new_status": self.new_status,
            "changed": self.changed,
            "warnings": self.warnings,
        }


def _clean_reason(reason: str) -> str:
    text = (reason or "").strip()
    if not text:
        raise InvalidInput.for_field("reason", "a reason is required to forget")
    if len(text) > REASON_MAX:
        raise InvalidInput.for_field("reason", f"reason must be at most {REASON_MAX} characters")
    return text


def _locked_memory(memory_id: str) -> Memory:
    pk = memory_pk(memory_id)
    memory = Memory.objects.select_for_update().filter(pk=pk).first() if pk is not None else None
    if memory is None:
        raise NotFound(f"no memory {memory_id}; use `slowave show` or the admin search to find ids")
    return memory


def _locked_procedure(procedure_id: str) -> Procedure:
    procedure = Procedure.objects.select_for_update().filter(pk=procedure_id).first()
    if procedure is None:
        raise NotFound(f"no procedure {procedure_id}")
    return procedure


def _log(
    *,
    memory: Memory | None = None,
    procedure: Procedure | None = None,
    action: str,
    prior: str,
    new: str,
    reason: str,
    actor: str,
    now: datetime,
) -> None:
    ForgetLog.objects.create(
        memory=memory,
        procedure=procedure,
        action=action,
        prior_status=prior,
        new_status=new,
        reason=reason,
        actor=actor or "unknown",
        created_at=now,
    )


def _active_twin(memory: Memory) -> Memory | None:
    """Another active memory with the same text, which would block restoring this one to active."""
    return (
        Memory.objects.filter(
            scope=memory.scope, normalized_hash=memory.normalized_hash, status=Memory.Status.ACTIVE
        )
        .exclude(pk=memory.pk)
        .first()
    )


def memory_forget(*, memory_id: str, reason: str, actor: str, now: datetime) -> ControlResult:
    """Suppress a memory from every retrieval; a repeat is a no-op that writes nothing."""
    text = _clean_reason(reason)
    with transaction.atomic():
        memory = _locked_memory(memory_id)
        prior = memory.status
        if prior == Memory.Status.FORGOTTEN:
            return ControlResult(memory_id, "forget", prior, prior, changed=False)
        Memory.objects.filter(pk=memory.pk).update(status=Memory.Status.FORGOTTEN)
        _log(
            memory=memory,
            action=ForgetLog.Action.FORGET,
            prior=prior,
            new=Memory.Status.FORGOTTEN,
            reason=text,
            actor=actor,
            now=now,
        )
    warnings = []
    if memory.generalization_stage >= 1:
        # A generalized memory may be shown in other scopes; people should know the reach.
        warnings.append(
            f"{memory_id} was generalized (stage {memory.generalization_stage}); "
            "it is now hidden in every scope"
        )
    return ControlResult(memory_id, "forget", prior, Memory.Status.FORGOTTEN, True, warnings)


def _prior_of_forget(memory: Memory) -> str:
    last = (
        ForgetLog.objects.filter(memory=memory, action=ForgetLog.Action.FORGET)
        .order_by("-created_at", "-pk")
        .first()
    )
    return last.prior_status if last is not None else Memory.Status.ACTIVE


def memory_unforget(
    *, memory_id: str, actor: str, now: datetime, reason: str = ""
) -> ControlResult:
    """Restore a forgotten memory to the status it had before it was forgotten."""
    with transaction.atomic():
        memory = _locked_memory(memory_id)
        if memory.status != Memory.Status.FORGOTTEN:
            raise InvalidInput.for_field_message(
                "memory_id", f"memory is not forgotten: {memory_id}"
            )
        restored = _prior_of_forget(memory)
        if restored == Memory.Status.ACTIVE:
            twin = _active_twin(memory)
            if twin is not None:
                raise InvalidInput.for_field_message(
                    "memory_id",
                    f"cannot unforget {memory_id}: active memory {memory_ref(twin.pk)} "
                    "has the same content in this scope; forget that one first",
                )
        Memory.objects.filter(pk=memory.pk).update(status=restored)
        _log(
            memory=memory,
            action=ForgetLog.Action.UNFORGET,
            prior=Memory.Status.FORGOTTEN,
            new=restored,
            reason=(reason or "").strip(),
            actor=actor,
            now=now,
        )
    return ControlResult(memory_id, "unforget", Memory.Status.FORGOTTEN, restored, changed=True)


def memory_reactivate(
    *, memory_id: str, actor: str, now: datetime, reason: str = ""
) -> ControlResult:
    """A person declares a stale memory current again (feedback never can, spec §8.2)."""
    with transaction.atomic():
        memory = _locked_memory(memory_id)
        if memory.status != Memory.Status.STALE:
            raise InvalidInput.for_field_message("memory_id", f"memory is not stale: {memory_id}")
        twin = _active_twin(memory)
        if twin is not None:
            raise InvalidInput.for_field_message(
                "memory_id",
                f"cannot reactivate {memory_id}: active memory {memory_ref(twin.pk)} "
                "has the same content in this scope",
            )
        flags = {k: v for k, v in memory.flags.items() if k != "stale_applied"}
        # Clearing the marker lets a later stale assessment retire it again.
        Memory.objects.filter(pk=memory.pk).update(
            status=Memory.Status.ACTIVE, stale_reason="", superseded_by=None, flags=flags
        )
        _log(
            memory=memory,
            action=ForgetLog.Action.REACTIVATE,
            prior=Memory.Status.STALE,
            new=Memory.Status.ACTIVE,
            reason=(reason or "").strip(),
            actor=actor,
            now=now,
        )
    return ControlResult(memory_id, "reactivate", Memory.Status.STALE, Memory.Status.ACTIVE, True)


def memory_reset_generalization(
    *, memory_id: str, actor: str, now: datetime, reason: str = ""
) -> ControlResult:
    """Send a memory back to its origin scope (stage 0); stages never drop on their own."""
    with transaction.atomic():
        memory = _locked_memory(memory_id)
        stage = memory.generalization_stage
        if stage == 0:
            return ControlResult(
                memory_id, "reset_generalization", memory.status, memory.status, False
            )
        Memory.objects.filter(pk=memory.pk).update(generalization_stage=0)
        note = (reason or "").strip() or f"stage {stage} reset to 0"
        _log(
            memory=memory,
            action=ForgetLog.Action.RESET_GENERALIZATION,
            prior=memory.status,
            new=memory.status,
            reason=note,
            actor=actor,
            now=now,
        )
    return ControlResult(memory_id, "reset_generalization", memory.status, memory.status, True)


def procedure_forget(*, procedure_id: str, reason: str, actor: str, now: datetime) -> ControlResult:
    text = _clean_reason(reason)
    with transaction.atomic():
        proc = _locked_procedure(procedure_id)
        prior = proc.status
        if prior == Procedure.Status.FORGOTTEN:
            return ControlResult(procedure_id, "forget", prior, prior, changed=False)
        Procedure.objects.filter(pk=proc.pk).update(
            status=Procedure.Status.FORGOTTEN, prior_status=prior
        )
        _log(
            procedure=proc,
            action=ForgetLog.Action.FORGET,
            prior=prior,
            new=Procedure.Status.FORGOTTEN,
            reason=text,
            actor=actor,
            now=now,
        )
    return ControlResult(procedure_id, "forget", prior, Procedure.Status.FORGOTTEN, True)


def procedure_unforget(
    *, procedure_id: str, actor: str, now: datetime, reason: str = ""
) -> ControlResult:
    with transaction.atomic():
        proc = _locked_procedure(procedure_id)
        if proc.status != Procedure.Status.FORGOTTEN:
            raise InvalidInput.for_field_message(
                "procedure_id", f"procedure is not forgotten: {procedure_id}"
            )
        restored = proc.prior_status or Procedure.Status.ACTIVE
        key_taken = (
            restored == Procedure.Status.ACTIVE
            and proc.deduplication_key
            and (
                Procedure.objects.filter(
                    scope=proc.scope,
                    deduplication_key=proc.deduplication_key,
                    status=Procedure.Status.ACTIVE,
                )
                .exclude(pk=proc.pk)
                .exists()
            )
        )
        if key_taken:
            # A newer procedure took the key meanwhile; the old one comes back as history.
            restored = Procedure.Status.SUPERSEDED
        Procedure.objects.filter(pk=proc.pk).update(status=restored, prior_status="")
        _log(
            procedure=proc,
            action=ForgetLog.Action.UNFORGET,
            prior=Procedure.Status.FORGOTTEN,
            new=restored,
            reason=(reason or "").strip(),
            actor=actor,
            now=now,
        )
    return ControlResult(procedure_id, "unforget", Procedure.Status.FORGOTTEN, restored, True)


def control_forget(*, ref: str, reason: str, actor: str, now: datetime) -> ControlResult:
    """Forget a memory (`sch_N`) or a procedure (`proc_…`) by its public id."""
    if ref.startswith("proc_"):
        return procedure_forget(procedure_id=ref, reason=reason, actor=actor, now=now)
    if memory_pk(ref) is None:
        raise InvalidInput.for_field("id", f"expected sch_N or proc_…, got {ref!r}")
    return memory_forget(memory_id=ref, reason=reason, actor=actor, now=now)


def control_unforget(*, ref: str, actor: str, now: datetime, reason: str = "") -> ControlResult:
    if ref.startswith("proc_"):
        return procedure_unforget(procedure_id=ref, actor=actor, now=now, reason=reason)
    if memory_pk(ref) is None:
        raise InvalidInput.for_field("id", f"expected sch_N or proc_…, got {ref!r}")
    return memory_unforget(memory_id=ref, actor=actor, now=now, reason=reason)
