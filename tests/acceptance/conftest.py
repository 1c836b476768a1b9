"""One real `mcp_serve` per acceptance module; each test isolates itself with a fresh scope."""

from tests.e2e_support import server_fixture

mcp = server_fixture()
