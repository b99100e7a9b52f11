"""The one exception the generated parser raises on its own: one of the engine's ad-hoc
syntax errors (the grammar's actions)."""

from __future__ import annotations

from typing import Any


class GrammarRefusal(Exception):
    """A statement the engine's grammar action refuses; ``token`` is where."""

    def __init__(self, message: str, token: Any) -> None:
        super().__init__(message)
        self.token = token
