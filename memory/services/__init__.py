"""Use cases (writes). Adapters call these; they never write through the ORM themselves."""
