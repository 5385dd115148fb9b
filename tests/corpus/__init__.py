"""Public single-table designs that no one here designed, each served from a declaration made from the docs alone."""
