"""The advertised REST surface: request bodies are the MCP tools' own models, each reply's `data`
is described key by key, and the docs work offline."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from django.test import Client

from mcp_bridge.tools import TOOLS
from memory.api.replies import REPLY_MODELS
from memory.models import MemoryType
from memory.schemas import MemoryTypeName

ROUTES = {name.removeprefix("slowave_"): tool.model for name, tool in TOOLS.items()}
PREFIX = "#/components/schemas/"


def _resolve(node: Any, defs: dict[str, Any], prefix: str) -> Any:
    """Inline every `$ref` so schemas that name their sub-models differently compare equal."""
    if isinstance(node, dict):
        if "$ref" in node and node["$ref"].startswith(prefix):
            return _resolve(defs[node["$ref"][len(prefix) :]], defs, prefix)
        return {k: _resolve(v, defs, prefix) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_resolve(v, defs, prefix) for v in node]
    return node


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_it_advertises_the_mcp_input_model_as_the_request_body(openapi, route) -> None:
    body = openapi["paths"][f"/api/{route}"]["post"]["requestBody"]["content"]["application/json"]
    components = openapi["components"]["schemas"]
    rest = _resolve(body["schema"], components, "#/components/schemas/")
    mcp = ROUTES[route].model_json_schema()
    assert rest == _resolve(mcp, mcp.get("$defs", {}), "#/$defs/")


def test_it_documents_bearer_auth_and_an_open_health_check(openapi) -> None:
    assert openapi["paths"]["/api/stats"]["get"]["security"]
    assert "security" not in openapi["paths"]["/api/health"]["get"]


def test_it_serves_the_docs_page_without_a_cdn(client) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "cdn." not in html and "https://" not in html
    for asset in ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-init.js"):
        assert f"/api/docs-assets/{asset}" in html
        assert client.get(f"/api/docs-assets/{asset}").status_code == 200
    assert client.get("/api/docs-assets/../settings.py").status_code == 404


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return own.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def test_it_declares_the_envelopes_every_route_answers_with(openapi) -> None:
    components = openapi["components"]["schemas"]
    assert {"ErrorOut", "ImportIn"} <= set(components)
    for path, methods in openapi["paths"].items():
        for method, operation in methods.items():
            responses = operation["responses"]
            ok_schema = responses["200"]["content"]["application/json"]["schema"]
            reply = components[ok_schema["$ref"].removeprefix(PREFIX)]
            assert reply["required"] == ["ok", "data"], (method, path)
            assert reply["properties"]["ok"]["const"] is True, (method, path)
            if path == "/api/health":
                continue
            for status in ("400", "401", "500", "503"):
                error = responses[status]["content"]["application/json"]["schema"]
                assert error == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)
            if "/forget" in path or "/unforget" in path or path == "/api/import":
                assert "403" in responses, path
    body = openapi["paths"]["/api/import"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": "#/components/schemas/ImportIn"}


def _operations(openapi: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(p, m, op) for p, methods in openapi["paths"].items() for m, op in methods.items()]


def test_it_describes_the_data_of_every_reply_key_by_key(openapi) -> None:
    components = openapi["components"]["schemas"]
    for path, method, operation in _operations(openapi):
        ok_schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
        reply = _resolve(ok_schema, components, PREFIX)
        data = reply["properties"]["data"]
        for shape in data.get("anyOf", [data]):
            assert shape.get("type") == "object", (method, path, shape)
            assert shape["properties"] and shape["additionalProperties"] is False, (path, shape)
            assert set(shape["required"]) <= set(shape["properties"]), (method, path)


def test_it_shows_each_reply_as_its_own_model_describes_it(openapi) -> None:
    # Components of one name from two modules once overwrote each other in the document.
    components = openapi["components"]["schemas"]
    for model in REPLY_MODELS:
        own = model.model_json_schema()
        shown = _resolve(components[model.__name__], components, PREFIX)
        assert shown == _resolve(own, own.get("$defs", {}), "#/$defs/"), model.__name__


def test_it_resolves_every_schema_reference(openapi) -> None:
    names = {ref.removeprefix(PREFIX) for ref in _refs(openapi["paths"])}
    names |= {ref.removeprefix(PREFIX) for ref in _refs(openapi["components"])}
    assert names <= set(openapi["components"]["schemas"])


def test_it_offers_exactly_the_models_memory_types() -> None:
    assert get_args(MemoryTypeName) == tuple(MemoryType.values)
