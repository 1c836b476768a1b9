"""A store records which embedder wrote its vectors and never takes another's
(memory.embedder_record): written by the first encode, read before every later one, a store
from before the record read as fp32, and doctor's report of it. The real fp32 and int8 models
on the test database."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings

from memory import embedder_record, embeddings
from memory.embedders.export_files import export_directory, manifest_read
from memory.embedders.onnx_runtime import BASE_NAME, INT8_NAME
from memory.embedders.serving import ServingEmbedder
from memory.errors import EmbedderMismatch
from memory.models import Memory, StoreEmbedder
from memory.services.doctor_embedder import check_store_embedder
from tests import factories

pytestmark = pytest.mark.django_db

_int8: list[ServingEmbedder] = []  # loaded once for the module: the second model costs ~1 s


@pytest.fixture(autouse=True)
def _records_read_afresh():
    embedder_record.checks_forget()  # every test's store starts without a record
    yield
    embedder_record.checks_forget()


def _serve_int8(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process embeds with the int8 weights from now on (SLOWAVE_EMBEDDER=onnx-int8)."""
    if not _int8:
        _int8.append(
            ServingEmbedder(
                source=settings.SLOWAVE_EMBEDDING_MODEL,
                model_dir=settings.SLOWAVE_MODEL_DIR,
                quantized=True,
            )
        )
    monkeypatch.setattr(settings, "SLOWAVE_EMBEDDER", "onnx-int8")
    monkeypatch.setattr(embeddings, "_embedder", _int8[0])


def _weights_sha256(name: str) -> str:
    manifest: dict[str, Any] = manifest_read(export_directory(settings.SLOWAVE_MODEL_DIR)) or {}
    return str(manifest["files"][name]["sha256"])


def _an_fp32_store() -> tuple[str, str]:
    scope = factories.fresh_scope()
    opened = factories.open_session(scope)
    factories.remember(scope, opened["session_id"], "The billing queue retries three times.")
    return scope, opened["session_id"]


def test_it_records_the_embedder_that_writes_a_store_first():
    _an_fp32_store()

    record = StoreEmbedder.objects.get()
    assert (record.name, record.precision, record.recorded_by) == (
        BASE_NAME,
        "fp32",
        "first_encode",
    )
    assert record.digest == _weights_sha256("model.onnx")


def test_it_refuses_an_int8_process_on_an_fp32_store_and_writes_nothing(monkeypatch):
    scope, session_id = _an_fp32_store()
    held = Memory.objects.count()
    _serve_int8(monkeypatch)

    with pytest.raises(EmbedderMismatch) as refused:
        factories.remember(scope, session_id, "The search index is rebuilt nightly.")
    error = refused.value.as_error()
    assert (error["code"], error["retryable"]) == ("embedder_mismatch", False)
    assert BASE_NAME in error["message"] and INT8_NAME in error["message"]
    assert "SLOWAVE_EMBEDDER=onnx " in error["message"]  # the way back to this store
    assert Memory.objects.count() == held
    with pytest.raises(EmbedderMismatch):  # nor does it rank int8 cues against fp32 vectors
        factories.recall(scope, session_id, "How often does the billing queue retry?")
    assert StoreEmbedder.objects.get().name == BASE_NAME


def test_an_int8_store_is_int8_and_refuses_fp32(monkeypatch):
    _serve_int8(monkeypatch)
    scope, session_id = _an_fp32_store()  # written by the int8 weights this time
    record = StoreEmbedder.objects.get()
    assert (record.name, record.precision) == (INT8_NAME, "int8")
    assert record.digest == _weights_sha256("model_qint8.onnx")

    monkeypatch.undo()  # the process's own fp32 embedder again
    embedder_record.checks_forget()
    with pytest.raises(EmbedderMismatch, match="SLOWAVE_EMBEDDER=onnx-int8"):
        factories.remember(scope, session_id, "The search index is rebuilt nightly.")


def test_a_store_without_vectors_takes_the_next_embedder(monkeypatch):
    _serve_int8(monkeypatch)
    embeddings.encode(["warm up"])  # a warm-up on a fresh store records int8...
    assert StoreEmbedder.objects.get().name == INT8_NAME

    monkeypatch.undo()
    embedder_record.checks_forget()
    _an_fp32_store()  # ...but binds nothing while the store holds no vectors
    assert StoreEmbedder.objects.get().name == BASE_NAME


def test_a_store_from_before_the_record_is_read_as_fp32(monkeypatch):
    _an_fp32_store()
    StoreEmbedder.objects.all().delete()  # as a store written before migration 0014
    migration = importlib.import_module("memory.migrations.0014_store_embedder")

    migration.record_existing(apps, None)

    record = StoreEmbedder.objects.get()
    assert (record.name, record.precision, record.recorded_by) == (
        BASE_NAME,
        "fp32",
        "existing_store",
    )
    _serve_int8(monkeypatch)
    with pytest.raises(EmbedderMismatch):
        embeddings.encode(["a cue"])


def test_a_store_from_before_the_record_without_vectors_gets_none():
    migration = importlib.import_module("memory.migrations.0014_store_embedder")
    migration.record_existing(apps, None)
    assert not StoreEmbedder.objects.exists()


def test_doctor_reports_the_store_embedder_and_a_conflict(monkeypatch):
    assert check_store_embedder().status == "ok"  # no vectors yet
    _an_fp32_store()

    fine = check_store_embedder()
    assert fine.status == "ok" and f"vectors written by {BASE_NAME} (fp32" in fine.detail

    _serve_int8(monkeypatch)
    conflict = check_store_embedder()
    assert conflict.status == "fail" and "SLOWAVE_EMBEDDER=onnx " in conflict.detail
