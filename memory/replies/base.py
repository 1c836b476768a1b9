"""`closed`: the pydantic config every reply shape carries (see memory/replies/__init__.py).

A TypedDict does not inherit its bases' pydantic config (its real base is `dict`), so each
shape is decorated, a subclass included.
"""

from __future__ import annotations

from pydantic import ConfigDict, with_config

# In the JSON schema: `additionalProperties: false`, so a key a service adds fails the tests
# that validate replies against the OpenAPI document.
closed = with_config(ConfigDict(extra="forbid"))
