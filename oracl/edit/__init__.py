"""The edit plane (design §5e): an agent's mutations parsed, gated, applied atomically and undone."""
