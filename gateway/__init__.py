"""tablegraph's engine: the single-table model, the store, per-request loaders and the ASGI app."""
