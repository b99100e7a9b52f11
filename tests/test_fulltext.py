"""ORACL's own full-text postings (oracl/core/fulltext.py): scored exactly as the engine's
index scored the same documents, and a delta over a base scored exactly as a base made
whole from the same live documents."""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import pytest

from oracl.core import fulltext as ft
from oracl.core.stopwords import STOPWORDS

WORDS = ("sign signing signed signature export exports exported archive archives archived key keys "
         "private public load loading loader config configure configuration vault bundle bundles build "
         "builder building query queries parse parser parsing http server client request response "
         "timeout retry retries token tokens stem stemming run running runs kùzu café naïve straße "
         "données graph graphs edge edges node nodes").split()
NOISE = ("the of and a is it to in zero z value 42 v2 1.5 x_y foo-bar a/b c:d e.f (g) [h] 'q' \"r\" `s` "
         "#t @u $w %x ^y &z *m ?n ~o |p").split()


def _corpus(seed: int, n: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        words = [rng.choice(WORDS) if rng.random() < 0.8 else rng.choice(NOISE) for _ in range(rng.randint(0, 40))]
        docs.append((f"pkg_{i % 7}/file_{i:04d}.py", " ".join(words)))
    docs.append(("only/stopwords.md", "the of and is it"))
    return docs


def _queries(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    fixed = ["signing export", "load private key", "kùzu café", "archiv*", "sign?d", "the", "export 42", "x_y"]
    return fixed + [" ".join(rng.choice(WORDS + NOISE) for _ in range(rng.randint(1, 6))) for _ in range(n)]


def _base(docs: list[tuple[str, str]]) -> ft.FullText:
    return ft.FullText(ft.Base(ft.encode_base((p, *ft.bag(t)) for p, t in docs)), ft.Delta())


def _engine(docs: list[tuple[str, str]]) -> object:
    import kuzu

    db = kuzu.Database(":memory:", buffer_pool_size=1 << 28, max_num_threads=2)
    conn = kuzu.Connection(db)
    conn.execute("LOAD EXTENSION fts")
    conn.execute("CREATE NODE TABLE C(path STRING PRIMARY KEY, text STRING)")
    conn.execute("UNWIND $d AS d CREATE (:C {path: d[1], text: d[2]})", {"d": [[p, t] for p, t in docs]})
    conn.execute("CALL CREATE_FTS_INDEX('C', 'ci', ['text'], stemmer := 'porter')")
    return db, conn


def _engine_search(conn: object, q: str, conjunctive: bool) -> dict[str, float]:
    rows = conn.execute("CALL QUERY_FTS_INDEX('C', 'ci', $q, conjunctive := $c, top := 100000) "  # type: ignore[attr-defined]
                        "RETURN node.path, score", {"q": q, "c": conjunctive}).get_all()
    return {p: s for p, s in rows}


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    # the engine adds a document's terms in its own order: the last bit may differ
    return set(a) == set(b) and all(math.isclose(a[p], b[p], rel_tol=1e-12) for p in a)


def test_scores_equal_the_engines_index_of_the_same_documents() -> None:
    docs = _corpus(7, 300)
    db, conn = _engine(docs)
    mine = _base(docs)
    checked = 0
    for q in _queries(11, 120):
        expected = _engine_search(conn, q, False)
        got = dict(mine.search(q, 100_000))
        assert _same(expected, got), q
        checked += bool(expected)
    assert checked >= 100  # (most queries match something: the comparison is not of empty sets)
    # (N enters every idf: equal scores mean equal N; a document of stop words has no row)
    assert mine.n_docs < len(docs) and mine.base.doc_id("only/stopwords.md") == -1  # type: ignore[union-attr]
    base = mine.base
    assert base is not None and [base.doc_id(base.path(i)) for i in range(base.n_docs)] == list(range(base.n_docs))
    assert [base.path(i) for i in range(base.n_docs)] == sorted(base.path(i) for i in range(base.n_docs))


def test_a_conjunctive_query_equals_the_engines_where_its_words_split_cleanly() -> None:
    """The engine's query tokenizer kept the empty parts of a query whose ignored
    characters ran into a space (``"export 42"`` → ``export``, ``""``): a conjunctive query
    then needed a term no document holds, and found nothing. Upstream later dropped empty
    parts; so does ORACL. Elsewhere the two agree."""
    docs = _corpus(3, 200)
    db, conn = _engine(docs)
    mine = _base(docs)
    clean = [q for q in _queries(5, 150) if "" not in ft.IGNORE_QUERY.sub(" ", q).lower().split(" ")]
    assert len(clean) > 40
    for q in clean:
        assert _same(_engine_search(conn, q, True), dict(mine.search(q, 100_000, conjunctive=True))), q
    assert _engine_search(conn, "signing 42", True) == {}
    every = dict(mine.search("signing 42", 100_000, conjunctive=True))
    assert every and every == dict(mine.search("signing", 100_000, conjunctive=True))


def test_the_stop_words_are_the_engines() -> None:
    """One document per word: the engine's index holds no row for a stop word."""
    words = sorted({w for w in STOPWORDS if "'" not in w} | {"sign", "key", "vault", "value", "zero", "z", "name"})
    db, conn = _engine([(w, w) for w in words])
    indexed = {w for w in words if w in _engine_search(conn, w, False)}
    assert {w for w in words if w not in indexed} == {w for w in words if w in STOPWORDS}
    assert len(STOPWORDS) == 570


def test_bm25_by_hand() -> None:
    # N = 3 documents of lengths 1, 3 and 4 (avgdl 8/3); "apple" is in two (df 2), once in each
    idf = math.log10((3 - 2 + 0.5) / (2 + 0.5) + 1)  # log10(1.6)
    assert ft.bm25(1, 2, 1, 3, 8 / 3) == pytest.approx(idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 0.375)), rel=1e-15)
    assert ft.bm25(1, 2, 1, 3, 8 / 3) == pytest.approx(0.2742375339499448, rel=1e-15)  # the engine's score
    docs = [("a", "apple"), ("b", "apple banana banana"), ("c", "cherry grape melon kiwi")]
    assert _base(docs).search("apples", 5) == [("a", 0.2742375339499448), ("b", 0.1941898213375285)]
    assert ft.bag("Signing the exports, signed: 2 keys_v2") == ({"sign": 2, "export": 1, "kei": 1}, 4)  # ("v": a stop word)
    assert ft.delta_bound(20_000) == 200 and ft.delta_bound(100) == ft.DELTA_DOCS_MIN


def _write_all(folder: Path, docs: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    ft.write(folder, sorted(docs.items()), durable=False)


def _results(folder: Path, queries: list[str]) -> list[list[tuple[str, float]]]:
    reader = ft.FullText.open(folder)
    assert reader is not None
    return [reader.search(q, 25) for q in queries] + [reader.search(q, 25, conjunctive=True) for q in queries]


def test_a_delta_over_a_base_scores_exactly_as_a_base_made_whole(tmp_path: Path) -> None:
    """200 random steps (an edit, an add, a delete, several at once) written as deltas
    over the previous bundle's postings: after each, every query's hits and scores equal
    those of postings made whole from the same documents, bit for bit – the delta is folded
    into a new base past its bound, and the base is linked, never written, until then."""
    rng = random.Random(1)
    docs = dict(_corpus(9, 150))
    queries = _queries(13, 25)
    previous = tmp_path / "b0"
    _write_all(previous, docs)
    folded = linked = 0
    for step in range(1, 201):
        folder = tmp_path / f"b{step}"
        folder.mkdir()
        changed: dict[str, str] = {}
        gone: list[str] = []
        for _ in range(rng.choice((1, 1, 1, 2, 5))):
            kind = rng.random()
            if kind < 0.6 and docs:
                p = rng.choice(sorted(docs))
                changed[p] = " ".join(rng.choice(WORDS + NOISE) for _ in range(rng.randint(0, 30)))
            elif kind < 0.8:
                changed[f"new/file_{step}_{rng.randrange(10**6)}.md"] = " ".join(rng.choice(WORDS) for _ in range(9))
            elif docs:
                p = rng.choice(sorted(docs))
                gone.append(p)
                changed.pop(p, None)
        note, known = ft.write(folder, sorted(changed.items()), previous=previous, delete=gone, durable=False)
        for p in gone:
            docs.pop(p, None)
        docs.update(changed)
        folded += bool(note)
        if (folder / ft.BASE_FILE).stat().st_ino == (previous / ft.BASE_FILE).stat().st_ino:
            linked += 1
        whole = tmp_path / "whole"
        _write_all(whole, docs)
        assert _results(folder, queries) == _results(whole, queries), step
        reader = ft.FullText.open(folder)
        assert reader is not None and reader.n_docs == sum(1 for t in docs.values() if ft.bag(t)[1] > 0)
        previous = folder
    assert folded >= 2 and linked >= 150  # both paths taken, the link most of the time


def test_a_one_document_change_links_the_base_and_writes_a_small_delta(tmp_path: Path) -> None:
    docs = {f"src/m{i}.py": " ".join(random.Random(i).choice(WORDS) for _ in range(40)) for i in range(2_000)}
    first, second = tmp_path / "a", tmp_path / "b"
    _write_all(first, docs)
    second.mkdir()
    note, known = ft.write(second, [("src/m5.py", "signing export quokka")], previous=first, durable=False)
    assert note == "" and known == {}  # (no manifest in a bare folder: nothing sealed to take)
    assert os.stat(second / ft.BASE_FILE).st_nlink == 2
    assert (second / ft.DELTA_FILE).stat().st_size < 200
    reader = ft.FullText.open(second)
    assert reader is not None and [p for p, _ in reader.search("quokka", 5)] == ["src/m5.py"]


def test_a_bundle_without_postings_refuses_to_be_written_over(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    with pytest.raises(ValueError, match="has no full-text postings"):
        ft.write(tmp_path / "new", [("a.py", "x")], previous=tmp_path / "old")
    assert ft.FullText.open(tmp_path / "old") is None


@pytest.mark.parametrize("damage", ["truncated", "magic", "overrun"])
def test_a_damaged_base_is_refused_with_one_reason(tmp_path: Path, damage: str) -> None:
    _write_all(tmp_path, dict(_corpus(2, 20)))
    data = bytearray((tmp_path / ft.BASE_FILE).read_bytes())
    if damage == "truncated":
        data = data[:20]
    elif damage == "magic":
        data[0] ^= 1
    else:
        data = data[: len(data) - 8]
    (tmp_path / ft.BASE_FILE).write_bytes(bytes(data))
    expected = {"truncated": "shorter than its header", "magic": "not a full-text base file",
                "overrun": "whose sections overrun it"}[damage]
    with pytest.raises(ValueError, match=expected):
        ft.FullText.open(tmp_path)


def test_damaged_postings_make_the_next_build_full_and_a_reader_say_so(tmp_path: Path) -> None:
    """The latest bundle's delta no longer parses: a reader says so in one line (and what
    to run), and the next build, which would have written over those postings, starts
    again full and says why; its postings are whole again."""
    from oracl.builder.orchestrator import build
    from oracl.core.errors import VaultError
    from oracl.core.vault import Vault
    from oracl.read.snapshot import Snapshot

    from .conftest import write_tree

    root = write_tree(tmp_path / "r", {"a.py": "def sign():\n    return 'quokka'\n", "b.md": "# Export\nquokka\n"})
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    vault = Vault(root)
    bundle = vault.bundle(vault.read_latest()["bundle"])
    (bundle / ft.DELTA_FILE).write_bytes(b'{"gone": [1], "docs": {"a.py": [2, {"x": "y"}]}}')
    with Snapshot.open(root) as snap, pytest.raises(VaultError) as err:
        snap.search_text("quokka", 5)
    assert str(err.value) == (f"the full-text postings of bundle {bundle.name} are unreadable (a damaged full-text "
                              f"delta file); run `oracl verify {root}`, then `oracl repair {root}`")
    (root / "c.py").write_text("def c():\n    return 'quokka'\n")
    report = build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert report.mode == ("full: the previous bundle's full-text postings could not be read (a damaged full-text "
                           "delta file)"), report.mode
    with Snapshot.open(root) as snap:
        assert sorted(p for p, _ in snap.search_text("quokka", 5)) == ["a.py", "b.md", "c.py"]
