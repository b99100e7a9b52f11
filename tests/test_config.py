from __future__ import annotations

from pathlib import Path

import pytest

from oracl.core.config import Config, load_config
from oracl.core.errors import ConfigError


def test_defaults_match_the_spec() -> None:
    c = Config()
    assert (c.alpha, c.beta, c.gamma, c.lam, c.neighbour_cap, c.query_neighbour_guard, c.priority_cap) == (
        0.35, 0.5, 0.2, 0.6, 250, 5000, 2.0)
    assert c.relation_prior("imports") == 1.0 and c.relation_prior("tests") == 0.5
    assert c.relation_prior("references_placeholder") == 0.4 and c.relation_prior("learned_association") == 0.5
    assert c.max_read_bytes == 8 * 1024 * 1024


def test_pyproject_then_oracl_toml_then_flags(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "my-app"\n[tool.oracl]\nalpha = 0.5\nsuffixes = [".py"]\n'
        'domain_map = { svc = "services" }\nrelation_weights = { mentions = 0.2 }\n')
    (tmp_path / "my_app").mkdir()
    (tmp_path / ".oracl.toml").write_text("beta = 0.9\nclassification_globs = { 'secrets/**' = 'sensitive' }\n")
    c = load_config(tmp_path, gamma=0.1)
    assert (c.alpha, c.beta, c.gamma) == (0.5, 0.9, 0.1)
    assert c.suffixes == (".py",)
    assert c.domain_map["svc"] == "services" and c.domain_map["my_app"] == "core" and c.domain_map["docs"] == "docs"
    assert c.relation_prior("mentions") == 0.2 and c.relation_prior("imports") == 1.0
    assert c.classification_globs == {"secrets/**": "sensitive"}


@pytest.mark.parametrize(("text", "message"), [
    ("[tool.oracl]\nalpah = 1\n", "unknown [tool.oracl] key(s): alpah"),
    ("[tool.oracl]\nsuffixes = '.py'\n", "[tool.oracl] suffixes must be a list of non-empty strings"),
    ("[tool.oracl]\nrelation_weights = { x = 2 }\n", "[tool.oracl] relation_weights.x must be a number in (0, 1]"),
    ("[tool.oracl]\ngitignore = 1\n", "[tool.oracl] gitignore must be true or false"),
    ("[tool.oracl\n", "pyproject.toml is not valid TOML"),
])
def test_bad_configuration(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path)
    assert str(err.value).startswith(message)
