"""Build phases: one module per phase, each a pure function over records."""
