"""The `data` of each REST route's success envelope, as ninja Schema classes.

These document replies; they do not shape them. Routes return the dicts the services build and
ninja renders them through the loose OkOut envelope exactly as before: re-serializing through
these models would reorder keys, drop or coerce whatever a model does not match, and turn a
mismatch found after a committed write into a 500. The OpenAPI document instead names them as
each route's 200 schema (memory.api.replies.reply_doc), and tests check what the services
actually return against that document.

base.py: `Out`, the base: unknown keys refused, a key that may be absent is a field defaulting
to None (and documented as optional, not as nullable). records.py: database rows as
`record_of` flattens them. verbs.py, reads.py, staff.py: the data of each route family.
"""
