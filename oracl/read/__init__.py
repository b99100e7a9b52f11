"""The read plane: the snapshot (the one way in), search, the graph, symbols, status and the Memory API."""
