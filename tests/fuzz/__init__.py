"""Fuzzing every surface (issue 16): hostile values (values.py), tool calls built from them
(bodies.py), the wire and JSON-RPC frames (wire.py), real ids to aim at (seed.py), what
every reply and the store must be afterwards (checks.py), and the frame loop the two MCP tests
share (frames.py). The tests are
tests/api/test_fuzz_surfaces.py (REST and MCP over HTTP) and tests/mcp_bridge/test_fuzz_stdio.py
(MCP over stdio)."""
