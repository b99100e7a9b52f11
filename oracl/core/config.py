"""Configuration: defaults, then ``[tool.oracl]`` of the indexed root's ``pyproject.toml``,
then ``.oracl.toml`` (its top level or its ``[tool.oracl]`` table), then CLI flags.

>>> cfg = load_config(Path("."))          # doctest: +SKIP
>>> cfg.alpha
0.35
"""

from __future__ import annotations

import hashlib
import math
import os
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import ConfigError
from oracl.core.packages import workspace_packages

# the suffixes a free-text path mention may end with (`see docs/guide.rst`, `cmd/root.go`)
MENTION_SUFFIXES = (".py", ".md", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".ini", ".cfg",
                    ".toml", ".ps1", ".sh", ".rst", ".adoc", ".html", ".go", ".js", ".mjs", ".cjs",
                    ".jsx", ".ts", ".tsx", ".rs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp",
                    ".cs", ".rb", ".php", ".swift", ".scala", ".sql", ".xml", ".gradle", ".proto",
                    ".css", ".cypher", ".ejs", ".erb", ".tmpl", ".j2", ".mk", ".cmake", ".bash")
DEFAULT_DOMAIN_MAP = {
    "src": "core", "docs": "docs", "doc": "docs", "tests": "tests", "test": "tests", "scripts": "ops",
    "tools": "tooling", "deploy": "deploy", "deployment": "deploy", ".github": "ci",
}
DEFAULT_DERIVED_OUTPUTS = ("report_tmp/", "deployment/staging/", "docs/reports/_tmp/", "client_data/")
DEFAULT_RELATION_WEIGHTS = {
    "imports": 1.0, "depends_on": 0.9, "belongs_to": 0.8, "configures": 0.7,
    "references": 0.6, "provides": 0.6, "references_placeholder": 0.4,
}
DEFAULT_RELATION_FALLBACK = 0.5
# relations that say files change together, not that one uses the other: weighted and ranked like
# every edge, left out of the association and of trace/related unless asked for
NOT_STRUCTURAL = frozenset({"co_change"})


@dataclass(frozen=True)
class Config:
    """Every tunable of a build. Immutable; derive variants with ``dataclasses.replace``."""

    suffixes: tuple[str, ...] = ()              # () = every text file; a list = only those suffixes
    index_generated: bool = False               # parse and index vendored, generated, minified and lock files
    domain_map: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_DOMAIN_MAP))
    # workspace package folder → domain; read from the root's package managers' manifests
    # (oracl.core.packages) unless set; {} = domains from the first path segment only
    packages: dict[str, str] = field(default_factory=dict)
    exclude_dirs: tuple[str, ...] = ()          # extra directory names or root-relative globs
    derived_outputs: tuple[str, ...] = DEFAULT_DERIVED_OUTPUTS
    classification_globs: dict[str, str] = field(default_factory=dict)  # glob -> confidential|sensitive|public|internal
    sensitivity_globs: dict[str, str] = field(default_factory=dict)     # glob -> low|medium|high
    relation_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RELATION_WEIGHTS))
    gitignore: bool = True
    max_read_bytes: int = 8 * 1024 * 1024       # files above this are recorded, hashed, not parsed
    fts_body_bytes: int = 64 * 1024             # leading bytes of each text indexed for full text
    fts_tf_cap: int = 2                         # a term counts at most this often in a document
    # (commit-bench Acc@5, flask: cap 1 → 0.58, 2 → 0.62, 3 → 0.64; the FTS build over the
    # 50k workspace: 9.9 s, 12.8 s, 15.2 s; 2 keeps every set ≥ +10 over BM25)
    alpha: float = 0.35
    beta: float = 0.5
    gamma: float = 0.2
    lam: float = 0.6
    neighbour_cap: int = 250
    # association = mean of this many heaviest incident weights: with 250 a 17-line module
    # with twenty strong links out-ranked the application's core, whose many weak mentions
    # pulled its mean down (design §4); 20 rewards having many strong links
    association_cap: int = 20
    query_neighbour_guard: int = 5000
    priority_cap: float = 2.0
    two_layer: bool = False
    # the vault's JSON-lines files (index.jsonl, edges/*.jsonl): ~60 MB written whole by
    # every build at 20k files, read by nothing in ORACL, so written only when asked for
    jsonl: bool = False
    workers: int = 0                            # 0 = one per core
    buffer_pool_bytes: int = 0                  # 0 = sized from the full text (see build_buffer_pool)
    db_threads: int = 2
    keep_bundles: int = 2
    snapshots: int = 5                          # timestamped signed exports kept under snapshots/
    health_threshold: float = 0.2               # `oracl health` flags count moves beyond this
    share_sensitive: bool = False               # MCP answers may name and quote files holding key material
    search_log: bool = True                     # log searches and follow-ups to .oracl/logs (oracl learn mines them)
    agent_never: tuple[str, ...] = ()           # globs of files an agent's mutation may never touch (oracl apply)
    agent_confirm_backrefs: int = 0             # a file more files name than this needs --confirm to edit (0: off)

    def build_buffer_pool(self, fts_text_bytes: int) -> int:
        """Kùzu's buffer pool for a build. Creating the FTS index keeps its postings in the
        pool: 50k files with 67 MB of indexed text failed at 512 MiB and passed at 768 MiB,
        so the pool is sized at 12× the text + 256 MiB (at least 256 MiB, at most 16 GiB)."""
        if self.buffer_pool_bytes:
            return self.buffer_pool_bytes
        return max(256 << 20, min(16 << 30, 12 * fts_text_bytes + (256 << 20)))

    def relation_prior(self, relation: str) -> float:
        """ρ(r) of design §5: the configured prior, 0.5 for any relation not in the table."""
        return self.relation_weights.get(relation, DEFAULT_RELATION_FALLBACK)

    def digest(self) -> str:
        """SHA-256 of the effective configuration (canonical JSON)."""
        return hashlib.sha256(orjson.dumps(asdict(self), option=orjson.OPT_SORT_KEYS)).hexdigest()

    def read_digest(self) -> str:
        """SHA-256 of the settings a file's Phase 1 facts and full-text document depend on
        (the others act on later phases, which every build recomputes): a selective rebuild
        may reuse facts only when this is unchanged."""
        part = {k: getattr(self, k) for k in READ_FIELDS}
        return hashlib.sha256(orjson.dumps(part, option=orjson.OPT_SORT_KEYS)).hexdigest()


SEARCH_LOG_ENV = "ORACL_SEARCH_LOG"


def search_log_enabled(root: Path, cfg: Config | None = None) -> bool:
    """Whether searches of ``root`` are logged to ``.oracl/logs/search_history.jsonl`` and
    the files used after them to ``logs/usage.jsonl`` (what ``oracl learn`` mines):
    ``ORACL_SEARCH_LOG=0`` (or ``off``,
    ``false``, ``no``) turns it off, ``=1`` on; otherwise ``search_log`` of the
    configuration (``cfg``, or the root's; on by default). An unreadable configuration
    counts as off."""
    env = os.environ.get(SEARCH_LOG_ENV, "").strip().lower()
    if env in ("0", "off", "false", "no"):
        return False
    if env in ("1", "on", "true", "yes"):
        return True
    if cfg is not None:
        return cfg.search_log
    # every search asks: the answer is kept while both files keep their size and mtime
    # (parsing a large pyproject.toml twice took 5.6 ms, a tenth of a search)
    key = (str(root), *(_stamp(root / name) for name in ("pyproject.toml", ".oracl.toml")))
    if key not in _SEARCH_LOG:
        if len(_SEARCH_LOG) > 64:
            _SEARCH_LOG.clear()
        try:
            _SEARCH_LOG[key] = load_config(root, packages={}).search_log  # no manifest is read for it
        except ConfigError:
            _SEARCH_LOG[key] = False
    return _SEARCH_LOG[key]


_SEARCH_LOG: dict[tuple[Any, ...], bool] = {}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


READ_FIELDS = ("suffixes", "index_generated", "max_read_bytes", "fts_body_bytes", "fts_tf_cap")
_TOML_KEYS = {f.name for f in fields(Config)}


# (low, high) of every numeric setting; ints must be whole numbers, floats finite
RANGES: dict[str, tuple[float, float]] = {
    "max_read_bytes": (1, 1 << 36), "fts_body_bytes": (0, 1 << 30), "fts_tf_cap": (1, 1000),
    "alpha": (0, 10), "beta": (0, 10), "gamma": (0, 1), "lam": (0, 10),
    "neighbour_cap": (1, 1_000_000), "association_cap": (1, 1_000_000),
    "query_neighbour_guard": (1, 100_000_000), "priority_cap": (1e-6, 1e6),
    "workers": (0, 1024), "buffer_pool_bytes": (0, 1 << 42), "db_threads": (1, 1024),
    "keep_bundles": (1, 1000), "snapshots": (0, 100_000), "health_threshold": (0, 1000),
    "agent_confirm_backrefs": (0, 1 << 30),
}
CHOICES = {"classification_globs": ("confidential", "sensitive", "public", "internal"),
           "sensitivity_globs": ("low", "medium", "high")}
MIN_POOL = 16 << 20


def _coerce(name: str, value: Any) -> Any:
    """``value`` of ``[tool.oracl] name`` checked for type and converted; ConfigError in one
    line otherwise (ranges are checked on the merged configuration)."""
    default = getattr(Config(), name)
    where = f"[tool.oracl] {name}"
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ConfigError(f"{where} must be a list of non-empty strings")
        return tuple(value)
    if isinstance(default, dict):
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a table")
        if name == "relation_weights":
            merged = dict(default)
            for k, v in value.items():
                if not isinstance(v, int | float) or isinstance(v, bool) or not 0 < float(v) <= 1:
                    raise ConfigError(f"{where}.{k} must be a number in (0, 1]")
                merged[k] = float(v)
            return merged
        if not all(isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip() for k, v in value.items()):
            raise ConfigError(f"{where} must map non-empty strings to non-empty strings")
        if name in CHOICES:
            bad = sorted(v for v in value.values() if v not in CHOICES[name])
            if bad:
                raise ConfigError(f"{where} values must be one of {', '.join(CHOICES[name])}, not {bad[0][:40]!r}")
        if name == "domain_map":
            merged = dict(default)
            merged.update(value)
            return merged
        if name == "packages":
            bad = [k for k in value if k.startswith("/") or ".." in k.split("/") or "\\" in k]
            if bad:
                raise ConfigError(f"{where} keys must be folders inside the root, not {bad[0][:40]!r}")
            return {k.strip("/"): v for k, v in value.items()}
        return dict(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false")
        return value
    if isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{where} must be a whole number")
        return value
    if isinstance(default, float):
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise ConfigError(f"{where} must be a finite number")
        return float(value)
    return value


def validate(cfg: Config) -> Config:
    """Every numeric setting within its range, every suffix a real suffix: ConfigError in
    one line naming the first setting that is not."""
    for name, (low, high) in RANGES.items():
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f"{name} must be a finite number, not {value!r}"[:160])
        if not low <= value <= high:
            raise ConfigError(f"{name} must be between {low:g} and {high:g}, not {value!r}"[:160])
    if 0 < cfg.buffer_pool_bytes < MIN_POOL:
        raise ConfigError(f"buffer_pool_bytes must be 0 (sized from the text) or at least {MIN_POOL}")
    for suffix in cfg.suffixes:
        if not (len(suffix) >= 2 and suffix.startswith(".") and "/" not in suffix and suffix.strip() == suffix):
            raise ConfigError(f"suffixes must look like '.py', not {suffix[:40]!r}")
    return cfg


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path.name} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path.name} is nested too deeply to read") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


def _project_package(root: Path) -> str:
    """The project's own top-level package (``[project] name`` of the root's pyproject, when
    a folder of that name exists at the root): it maps to the ``core`` domain."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return ""
    try:
        project = _read_toml(pyproject).get("project", {})
    except ConfigError:
        return ""
    name = project.get("name", "") if isinstance(project, dict) else ""
    if not isinstance(name, str):
        return ""
    pkg = name.lower().replace("-", "_").replace(".", "_")
    return pkg if pkg and (root / pkg).is_dir() else ""


def load_config(root: Path, **overrides: Any) -> Config:
    """The effective configuration for ``root``; ``overrides`` (CLI flags) win last.

    Unknown keys in ``[tool.oracl]`` are an error, so a typo never silently does nothing.
    """
    table: dict[str, Any] = {}
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        table.update(_oracl_table(_read_toml(pyproject), "pyproject.toml", {}))
    local = root / ".oracl.toml"
    if local.is_file():
        data = _read_toml(local)
        table.update(_oracl_table(data, ".oracl.toml", data))
    project_pkg = _project_package(root)
    if project_pkg and "domain_map" not in overrides:
        table.setdefault("domain_map", {})
        table["domain_map"] = {project_pkg: "core", **table["domain_map"]}
    if "packages" not in table and "packages" not in overrides:
        table["packages"] = workspace_packages(root)
    unknown = sorted(set(table) - _TOML_KEYS)
    if unknown:
        raise ConfigError(f"unknown [tool.oracl] key(s): {', '.join(unknown)}")
    values = {k: _coerce(k, v) for k, v in table.items()}
    values.update({k: v for k, v in overrides.items() if v is not None})
    return validate(replace(Config(), **values))


def _oracl_table(data: dict[str, Any], source: str, fallback: dict[str, Any]) -> dict[str, Any]:
    """``[tool.oracl]`` of a parsed TOML file (``fallback`` when it has no ``[tool]``)."""
    if "tool" not in data:
        return dict(fallback)
    tool = data["tool"]
    if not isinstance(tool, dict):
        raise ConfigError(f"{source}: [tool] must be a table")
    table = tool.get("oracl", {} if source == "pyproject.toml" else fallback)
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.oracl] must be a table")
    return {k: v for k, v in table.items() if k != "tool"} if table is fallback else dict(table)
