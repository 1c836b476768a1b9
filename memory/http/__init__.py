"""The HTTP edge that REST (memory.api) and MCP over HTTP (mcp_bridge.http) share.

workers.py: the pool of SLOWAVE_HTTP_WORKERS threads both surfaces run their calls in.
host_policy.py: the Host/Origin/Content-Type rule applied before any token check.
status.py: the one table that turns an error code into an HTTP status.
Here because both adapters need them and memory is the layer both stand on; the NinjaAPI,
the URL map and the ASGI routing that use them live in slowave_site.
"""
