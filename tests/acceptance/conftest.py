"""One real `mcp_serve` per acceptance module and database; each test isolates itself with a
fresh scope. Every scenario runs on SQLite and again on PostgreSQL (spec §12)."""

from tests.e2e_support import server_fixture

mcp = server_fixture(databases=("sqlite", "postgresql"))
