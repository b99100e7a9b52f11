"""Hand-computed values for Eq. 2 of design §4."""

from __future__ import annotations

import math

import pytest

from oracl.builder.pipeline import priority as p


def test_weights_sum_to_one() -> None:
    assert sum(p.BUCKET_WEIGHTS.values()) == pytest.approx(1.0)
    assert len(p.BUCKET_WEIGHTS) == 12


@pytest.mark.parametrize(("path", "families", "secret", "expected"), [
    ("core/auth/login.py", 0, False, 40),
    ("core/design.py", 0, False, 0),          # "design" does not start with "sign"
    ("core/signing.py", 2, True, 40 + 30 + 20),
    ("lib/x.py", 6, False, 60),               # families capped at 4
    ("security/keys.py", 4, True, 100),       # 40 + 60 + 20 = 120 → capped at 100
])
def test_risk_score(path: str, families: int, secret: bool, expected: int) -> None:
    assert p.risk_score(path, families, secret) == expected


def test_sensitivity_levels() -> None:
    assert p.sensitivity(49, False) == "low"
    assert p.sensitivity(50, False) == "medium"
    assert p.sensitivity(0, True) == "high"
    assert p.sensitivity(0, False, "medium") == "medium"
    assert p.sensitivity(60, False, "low") == "medium"  # config never lowers a finding


def test_components_every_bucket() -> None:
    x = p.PriorityInputs(risk_score=55, degree=10, usage=250, backrefs=4, lifecycle="archived",
                         testing=0.5, documentation=0.75, age_days=45, review_status="reviewed",
                         estimated_savings=250, content_type="report", placeholder=True)
    c = p.components(x)
    assert c == {"security": 0.55, "connectivity": 0.4, "usage": 1.0, "authority": 0.4,
                 "lifecycle": 0.5, "testing": 0.5, "documentation": 0.75,
                 "freshness": pytest.approx(math.exp(-0.5)), "governance": 0.7, "cost_savings": 0.25,
                 "instruction": 0.5, "completeness": 0.0}
    # 0.165 + 0.04 + 0.1 + 0.04 + 0.04 + 0.035 + 0.0375 + 0.05·e^-0.5 + 0.028 + 0.01 + 0.02 + 0
    expected = 0.5155 + 0.05 * math.exp(-0.5)
    assert p.weighted_sum(c) == pytest.approx(expected)
    assert p.base_priority(c, "confidential", "medium") == pytest.approx(expected * 1.35 * 1.4)


def test_cap_truncates_the_extreme_cell() -> None:
    c = p.components(p.PriorityInputs(risk_score=100, degree=25, usage=100, backrefs=10,
                                      testing=1.0, documentation=1.0, review_status="approved",
                                      estimated_savings=1000, content_type="instruction"))
    assert p.weighted_sum(c) == pytest.approx(1.0)
    assert p.base_priority(c, "sensitive", "high") == 2.0          # 2.97 → 2.0
    assert p.base_priority(c, "sensitive", "high", cap=3.0) == pytest.approx(2.97)


@pytest.mark.parametrize(("fmt", "doc", "defs", "documented", "expected"), [
    ("py", True, 4, 1, 0.625), ("py", False, 0, 0, 0.0), ("py", True, 0, 0, 0.5),
    ("md", False, 0, 0, 1.0), ("txt", False, 0, 0, 1.0), ("json", True, 3, 3, 0.0),
    ("rst", False, 0, 0, 1.0), ("adoc", False, 0, 0, 1.0),
])
def test_documentation_signal(fmt: str, doc: bool, defs: int, documented: int, expected: float) -> None:
    assert p.documentation_signal(fmt, doc, defs, documented) == expected


def test_documentation_signal_of_any_code_language() -> None:
    # a Go file: its first definition documented, 2 of 5 definitions documented → 0.5 + 0.5·0.4
    assert p.documentation_signal("go", True, 5, 2, code=True) == 0.7
    assert p.documentation_signal("go", True, 5, 2) == 0.0  # not code: a format without docs
