"""The `data` of every reply, as TypedDicts: what the services build and what OpenAPI shows.

Each shape is written once, here. The services and selectors return these TypedDicts (plain
dicts at runtime, so a reply costs nothing extra and its JSON is whatever the service built,
key order included); the REST layer (memory.api.replies) wraps them in envelope models whose
JSON schema pydantic derives from these same classes, and tests check what the services
actually return against that document. Nothing here validates or re-serializes a reply: doing
so after a committed write would turn a mismatch into a 500.

base.py: `closed`, the decorator every shape carries (unknown keys refused in the schema).
A key the service may leave out is `NotRequired` (documented as optional, not as nullable).
records.py: database rows as `record_of` flattens them, generated from the Django models.
verbs.py, reads.py, staff.py: the data of each route family.
"""
