"""Eq. 2 of design §4: the twelve-bucket base priority with its two multipliers and cap.

>>> c = components(PriorityInputs(risk_score=40, lifecycle="active"))
>>> round(base_priority(c, "internal", "low"), 6)   # (0.12+0.08+0.05+0.012+0.03)·1.15
0.3358
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from oracl.core.paths import BUCKET_WEIGHTS

M_CLS = {"public": 1.0, "internal": 1.15, "confidential": 1.35, "sensitive": 1.65}
M_SENS = {"low": 1.0, "medium": 1.4, "high": 1.8}
GOVERNANCE = {"approved": 1.0, "reviewed": 0.7, "draft": 0.3}
SECURITY_HINTS = ("auth", "crypt", "secret", "token", "password", "credential", "permission",
                  "security", "sign", "cert", "key", "vault", "ssl", "tls")
# path words that start with a hint but are not about security ("signals", "keyword",
# "authors", "certain", "tokenizer")
SECURITY_FALSE_FRIENDS = ("signal", "keyword", "keyboard", "keymap", "keys", "keyed", "author", "certain",
                          "tokeniz", "tokens")
_TOKENS = re.compile(r"[a-z0-9]+")


def security_hint(path: str) -> bool:
    """A path word *starting* with a hint (``signing`` yes, ``design`` no, ``signals`` no)."""
    return any(tok.startswith(SECURITY_HINTS) and not tok.startswith(SECURITY_FALSE_FRIENDS)
               for tok in _TOKENS.findall(path.lower()))


# What a file is to the product (design §4, "role"): the product's own code and files, or a
# copy made to show, test or ship it. Examples, tutorials, fixtures and vendored copies keep
# half of what they earn and all of what they lose: m_role · (P0 + α·max(δ, 0)) + α·min(δ, 0).
M_ROLE = {"product": 1.0, "example": 0.5, "fixture": 0.5, "vendored": 0.5, "generated": 0.5}
def final_priority(p0: float, alpha: float, delta: float, file_role: str = "product") -> float:
    """Eq. 5 with the role multiplier: m_role · (P0 + α·max(δ, 0)) + α·min(δ, 0)."""
    m = M_ROLE.get(file_role, 1.0)
    return m * (p0 + alpha * max(delta, 0.0)) + alpha * min(delta, 0.0)


def risk_score(path: str, sensitive_families: int, secret_key_named: bool) -> int:
    """0–100: 40·[hint in path] + 15·min(4, API families) + 20·[secret-like key named]."""
    return min(100, 40 * security_hint(path) + 15 * min(4, sensitive_families) + 20 * secret_key_named)


def sensitivity(risk: int, key_material_or_literal: bool, configured: str = "") -> str:
    level = "high" if key_material_or_literal else "medium" if risk >= 50 else "low"
    if configured in M_SENS and list(M_SENS).index(configured) > list(M_SENS).index(level):
        level = configured
    return level


@dataclass(frozen=True, slots=True)
class PriorityInputs:
    risk_score: int = 0
    degree: int = 0                 # artifact–artifact edges, both directions
    usage: int = 0
    backrefs: int = 0
    lifecycle: str = "active"
    testing: float = 0.0            # 1 tested, 0.5 is a test, 0 otherwise
    documentation: float = 0.0
    age_days: float = 0.0
    review_status: str = "draft"
    estimated_savings: float = 0.0
    content_type: str = "generic"
    placeholder: bool = False


def components(x: PriorityInputs) -> dict[str, float]:
    """c_b(a) ∈ [0, 1] for each of the twelve buckets."""
    return {
        "security": x.risk_score / 100,
        "connectivity": min(1.0, x.degree / 25),
        "usage": min(1.0, x.usage / 100),
        "authority": min(1.0, x.backrefs / 10),
        "lifecycle": 1.0 if x.lifecycle == "active" else 0.5,
        "testing": x.testing,
        "documentation": x.documentation,
        "freshness": math.exp(-max(0.0, x.age_days) / 90),
        "governance": GOVERNANCE.get(x.review_status, 0.3),
        "cost_savings": min(1.0, max(0.0, x.estimated_savings) / 1000),
        "instruction": 1.0 if x.content_type == "instruction" else 0.5 if x.content_type in ("report", "issue") else 0.0,
        "completeness": 0.0 if x.placeholder else 1.0,
    }


def weighted_sum(comp: dict[str, float]) -> float:
    return sum(BUCKET_WEIGHTS[b] * comp[b] for b in BUCKET_WEIGHTS)


def base_priority(comp: dict[str, float], classification: str, sens: str, cap: float = 2.0) -> float:
    """P0 = min(cap, Σ w_b·c_b · m_cls · m_sens)."""
    return min(cap, weighted_sum(comp) * M_CLS.get(classification, 1.15) * M_SENS.get(sens, 1.0))


DOC_FORMATS = frozenset({"md", "txt", "rst", "adoc"})


def documentation_signal(fmt: str, module_docstring: bool, defs: int, documented: int, code: bool = False) -> float:
    """Code (py, or any language with an extractor: ``code``): 0.5·[module docstring] +
    0.5·(documented defs / defs); md/txt/rst/adoc: 1; else 0. A module without definitions
    scores its docstring half only (0/0 counts as 0). For a language without docstrings the
    module half is a doc comment on its first definition."""
    if fmt == "py" or code:
        return 0.5 * module_docstring + (0.5 * documented / defs if defs else 0.0)
    return 1.0 if fmt in DOC_FORMATS else 0.0
