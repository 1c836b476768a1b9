"""Salience and weights read as people read them: two places, not a float's last digits."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from memory.models import Memory, Support
from tests import factories

pytestmark = pytest.mark.django_db
RAW = 0.8999999999999999  # 1.4 less five feedback steps of 0.1, as floats add up


def test_it_rounds_salience_and_weights_on_the_admin_pages(admin_client: Client) -> None:
    _, (memory_id,) = factories.seeded_scope("Invoices go out on the first of the month.")
    pk = int(memory_id[4:])
    # The display under test, not the learning: the stored value is set as decay leaves it.
    Memory.objects.filter(pk=pk).update(salience=RAW)
    Support.objects.filter(memory_id=pk).update(weight=RAW)
    pages = [
        admin_client.get(reverse("admin:memory_memory_change", args=[pk])),
        admin_client.get(reverse("admin:memory_memory_changelist")),
        admin_client.get(reverse("admin:memory_support_changelist")),
    ]
    for page in pages:
        html = page.content.decode()
        assert page.status_code == 200 and str(RAW) not in html
    assert "0.90" in pages[0].content.decode() and "0.90" in pages[2].content.decode()
