"""A path under `/api/` that no route takes answers the JSON envelope, not Django's HTML 404."""

from __future__ import annotations

import pytest

from tests.api.support import err, post

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/api/nope",
        "/api/memories/sch_1%2Fevidence",  # %2F is decoded before routing: not an id
        "/api/memories/sch_1/",
        "/api/docs-assets/settings.py",
        "/api/",
    ],
)
def test_it_answers_an_unknown_path_with_not_found(client, path: str) -> None:
    response = client.get(path)
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    error = err(response, 404, "not_found")
    assert "/api/docs" in error["message"], error


def test_it_answers_an_unknown_post_with_not_found(client) -> None:
    error = err(post(client, "activate/again", {"task": "t"}), 404, "not_found")
    assert error["message"].startswith("no route POST /api/activate/again")
