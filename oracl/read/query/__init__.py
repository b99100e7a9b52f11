"""ORACall, the query plane: parse (six passes) → compile (parameterised Cypher) → run."""
