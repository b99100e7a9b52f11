"""The export's parts (``oracl/core/parts.py``): groups closed by their own keys, a store
that writes only what it lacks and checks what it reads, an index of a known shape, and
parts removed only when no kept index names them. Real files, real builds."""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.bundle import provenance
from oracl.core.errors import DigestError
from oracl.core.parts import (
    GROUP,
    MAP_GROUP,
    ZSTD_MAGIC,
    KeptSection,
    PartStore,
    closes,
    content_size,
    decode_index,
    digests,
    encode_index,
    grouped,
    pack,
    put_rows,
    unpack,
)
from oracl.core.vault import EXPORT_INDEX, STAT_FILE, SYMBOLS_FILE, Vault

from .conftest import SAMPLE, export_of, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}


def test_a_group_closes_after_a_key_whose_crc_is_zero_modulo_the_group_size() -> None:
    keys = [f"k{i:03d}" for i in range(400)]
    closing = [k for k in keys if zlib.crc32(k.encode()) % GROUP == 0]
    assert [k for k in keys if closes(k)] == closing and len(closing) == 24  # (GROUP = 16)
    runs = grouped(keys)
    assert runs[0][0] == 0 and runs[-1][1] == len(keys)
    assert all(a == b for (_, a), (b, _) in zip(runs, runs[1:], strict=False))  # contiguous, nothing skipped
    assert [keys[b - 1] for _, b in runs[:-1]] == closing[:len(runs) - 1]       # each run ends on a closing key
    # equal keys stay together: a run never ends inside them
    first = closing[0]
    twice = sorted([*keys, first])
    assert all(twice[b - 1] != twice[b] for _, b in grouped(twice)[:-1])
    # a key added before the first closing key changes the first run only
    more = sorted([*keys, "k000a"])
    assert grouped(more)[1:] == [(a + 1, b + 1) for a, b in runs[1:]]


def test_a_kept_section_patched_in_place_gives_the_parts_of_all_its_rows_put_again(tmp_path: Path) -> None:
    """A long-lived builder's section (``KeptSection``): after any run of inserts, removes
    and replaces, its parts are ``put_rows`` of every row in key order, and only the parts
    holding a changed row are put again."""
    import random

    rng = random.Random(7)
    store = PartStore(tmp_path / "parts")
    groups = [f"src{i:04d}" for i in range(3000)]  # 186 close a group (GROUP = 16)
    assert sum(closes(g) for g in groups) == 186
    rows: dict[tuple[str, int], int] = {}  # (group, n) → a value
    for n in range(4000):
        rows[(rng.choice(groups), n)] = rng.randrange(1000)

    def put_all(into: PartStore) -> list[list[object]]:
        keys = sorted(rows)
        return put_rows(into, [[k[0], k[1], rows[k]] for k in keys], [k[0] for k in keys])

    def chunk(k: tuple[str, int]) -> bytes:
        return orjson.dumps([k[0], k[1], rows[k]])

    keys = sorted(rows)
    section = KeptSection.of(keys, [k[0] for k in keys], [chunk(k) for k in keys])
    whole = PartStore(tmp_path / "whole")
    assert section.parts(store) == put_all(whole)
    for step in range(30):
        changed = set()
        for _ in range(rng.randrange(1, 6)):
            op = rng.random()
            closing = sorted({k for k in rows if closes(k[0])})
            if op < 0.15 and closing:  # every row of a group that closes a part goes: two parts join
                g = rng.choice(closing)[0]
                for k in [k for k in rows if k[0] == g]:
                    del rows[k]
                    section.remove(k)
            elif op < 0.3 and closing:  # a new group just after one that closes: the next part's
                k = (rng.choice(closing)[0] + "+", 1000 + step * 10 + len(changed))
                rows[k] = rng.randrange(1000)
                section.insert(k, k[0], chunk(k))
            elif op < 0.45 and rows:  # a row goes
                k = rng.choice(sorted(rows))
                del rows[k]
                section.remove(k)
            elif op < 0.75:  # a row comes (at the front, the back or between)
                k = (rng.choice(["aaa", "zzz", *groups]), 1000 + step * 10 + len(changed))
                rows[k] = rng.randrange(1000)
                section.insert(k, k[0], chunk(k))
            elif rows:  # a row's bytes move
                k = rng.choice(sorted(rows))
                rows[k] += 1
                section.replace(k, chunk(k))
            changed.add(step)
        store.written = 0
        want = put_all(whole)
        assert section.parts(store) == want, step
        assert len(want) >= 20 and store.written <= 10, (step, store.written)  # the touched parts, not all
    with pytest.raises(KeyError):
        section.remove(("nowhere", -1))
    emptied = KeptSection.of([("a", 0)], ["a"], [b"0"])
    emptied.remove(("a", 0))
    assert emptied.parts(store) == []
    emptied.insert(("b", 1), "b", b"1")
    assert emptied.parts(store) == put_rows(store, [1], ["b"])


def test_kept_stat_rows_patched_in_place_are_put_maps_parts(tmp_path: Path) -> None:
    """``incremental.kept_stat``: a long-lived builder's stat.bin rows, changed in place for
    the files read again (one edited, one added) and gone, give the parts ``put_map`` of
    every file's row gives, and only the touched parts are put again."""
    import dataclasses

    from oracl.builder.incremental import kept_stat, stat_rows
    from oracl.core.parts import put_map
    from oracl.core.records import FileFacts

    store = PartStore(tmp_path / "parts")
    facts = {f"pkg/m{i:04d}.py": FileFacts(f"pkg/m{i:04d}.py", f"id{i}", f"c{i}", i, 10 * i, 20 * i, "ok")
             for i in range(3000)}
    parts, kept = kept_stat(store, None, facts, [], [], {})
    assert parts == put_map(PartStore(tmp_path / "whole"), stat_rows(list(facts.values())))
    # cut at MAP_GROUP (64), not the rows' GROUP (16): 52 of the keys close a part, not the last one
    assert sum(closes(k, MAP_GROUP) for k in facts) == 52 and len(parts) == 53
    for digest, size in parts:  # kept as their bytes: a cold query reads them with no codec
        assert (store.root / digest[:2] / digest).stat().st_size == size
    before = dict(facts)
    facts["pkg/m0007.py"] = dataclasses.replace(facts["pkg/m0007.py"], checksum="edited", size_bytes=99)
    facts["pkg/new ü.py"] = FileFacts("pkg/new ü.py", "idn", "cn", 1, 2, 3, "binary")
    del facts["pkg/m2000.py"]
    store.written = 0
    parts, _ = kept_stat(store, kept, facts, ["pkg/m0007.py", "pkg/new ü.py"], ["pkg/m2000.py"], before)
    assert parts == put_map(PartStore(tmp_path / "whole"), stat_rows(sorted(facts.values(), key=lambda f: f.path)))
    assert 1 <= store.written <= 6  # (the touched groups' parts, not every one)


def test_the_store_writes_what_it_lacks_and_checks_what_it_reads(tmp_path: Path) -> None:
    store = PartStore(tmp_path / "parts")
    rows = [{"id": f"n{i}", "v": i} for i in range(5)]
    parts = put_rows(store, rows, [r["id"] for r in rows])
    joined = b",".join(store.get(d) for d, _ in parts)
    assert orjson.loads(b"[" + joined + b"]") == rows
    assert sum(n for _, n in parts) + len(parts) - 1 == len(joined)
    again = PartStore(store.root)
    assert put_rows(again, rows, [r["id"] for r in rows]) == parts and again.written == 0  # there already
    digest = parts[0][0]
    path = store.root / digest[:2] / digest
    plain = store.get(digest)
    assert path.read_bytes() == pack(plain) and path.read_bytes()[:4] == ZSTD_MAGIC  # kept as one frame
    assert content_size(path.read_bytes()) == len(plain) == parts[0][1]
    path.write_bytes(path.read_bytes()[:-1] + b" ")  # the frame's last byte (its checksum or data)
    with pytest.raises(DigestError, match=f"part {digest[:16]}… does not (decompress|match its digest)"):
        PartStore(store.root).get(digest)
    path.write_bytes(pack(plain[:-1] + b" "))  # a sound frame holding other bytes
    with pytest.raises(DigestError, match=f"part {digest[:16]}… does not match its digest"):
        PartStore(store.root).get(digest)
    path.write_bytes(pack(plain)[:5] + b"\x00" * 8)  # a frame header only
    with pytest.raises(DigestError, match=f"part {digest[:16]}… does not decompress"):
        PartStore(store.root).get(digest)
    framed_like = ZSTD_MAGIC + b"\x00" * 12  # plain bytes that begin like a frame (raw doubles could)
    odd = store.put(framed_like)
    assert (store.root / odd[:2] / odd).read_bytes() == framed_like and PartStore(store.root).get(odd) == framed_like
    damaged = bytearray(framed_like)
    damaged[-1] ^= 0xFF  # a plain part with a flipped byte, beginning like a frame: refused, not served
    (store.root / odd[:2] / odd).write_bytes(bytes(damaged))
    with pytest.raises(DigestError, match=f"part {odd[:16]}… is not a frame this store writes"):
        PartStore(store.root).get(odd)
    path.write_bytes(plain[:-1] + b" ")  # an older vault's plain part, damaged
    with pytest.raises(DigestError, match=f"part {digest[:16]}… does not match its digest"):
        PartStore(store.root).get(digest)
    path.write_bytes(plain)  # a part an older vault kept as its bytes: read, and known by its size
    assert PartStore(store.root).get(digest) == plain and PartStore(store.root).has(digest, len(plain))
    assert not PartStore(store.root).has(digest, len(plain) + 1)
    big = b",".join(orjson.dumps({"id": f"n{i}", "checksum": "ab" * 32, "v": i}) for i in range(400))
    assert len(pack(big)) * 3 < len(big) and unpack(pack(big), "d" * 64) == big
    path.unlink()
    with pytest.raises(DigestError, match="is missing"):
        PartStore(store.root).get(digest)
    for hostile in ("../../etc/passwd", "A" * 64, digest[:63]):  # a name from an index never leaves the store
        with pytest.raises(DigestError, match="not a SHA-256"):
            store.get(hostile)
    # a rewrite (a full build) writes every part again, healing a damaged one
    healer = PartStore(store.root)
    assert put_rows(healer, rows, [r["id"] for r in rows], rewrite=True) == parts
    assert healer.written == len(parts) and PartStore(store.root).get(digest)


def test_an_index_has_one_shape() -> None:
    good = encode_index({"version": "x", "mu": 0.1 + 0.2}, {"nodes": [["a" * 64, 3]]})
    doc = decode_index(good)
    assert doc["header"]["mu"] == 0.3 and digests(doc) == {"a" * 64}  # the header as the export rounds it
    bad = [b"[]", b"{}", b"not json", orjson.dumps({"format": 1, "header": {}, "sections": {"nodes": [["x", 3]]}}),
           orjson.dumps({"format": 1, "header": {}, "sections": {"other": []}}),
           orjson.dumps({"format": 1, "header": {}, "sections": {"nodes": [["a" * 64, 0]]}}),
           orjson.dumps({"format": 2, "header": {}, "sections": {}})]
    for data in bad:
        with pytest.raises(DigestError, match="is not an export index"):
            decode_index(data)


def test_parts_go_when_no_kept_index_names_them(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, snapshots=1, **SMALL)
    vault = Vault(root)

    def named() -> set[str]:  # by the kept bundles (their index and symbols.seg), the snapshots, the top level
        out: set[str] = set()
        for b in [*vault.mirror.iterdir(), *(vault.dir / "snapshots").iterdir(), vault.dir]:
            if (b / EXPORT_INDEX).is_file():
                out |= digests(decode_index((b / EXPORT_INDEX).read_bytes()))
            if (b / SYMBOLS_FILE).is_file():
                out |= {d for d, *_ in orjson.loads((b / SYMBOLS_FILE).read_bytes())["groups"]}
            if (b / STAT_FILE).is_file():  # its rows' parts, its edges' raw ranks, its name tables, its reads,
                doc = orjson.loads((b / STAT_FILE).read_bytes())  # its type names
                out |= {d for d, _ in doc["parts"]} | ({doc["ranks"][0]} if "ranks" in doc else set()) \
                    | {doc["interface_types"][0]} \
                    | ({doc["symbol_table"]["part"]} if "symbol_table" in doc else set()) \
                    | {p["part"] for p in (doc.get("read_sets") or {}).values() if p} \
                    | ({doc["symbol_table"]["patch"]["part"]} if "patch" in doc.get("symbol_table", {}) else set())
        return out

    def stored() -> set[str]:
        return {p.name for p in vault.parts.rglob("*") if p.is_file()}

    first = named()
    assert stored() == first
    for i in range(3):  # each rebuild changes one file: its group's parts are new, the old ones go with their bundle
        (root / "pkg" / "util.py").write_text(f"def helper():\n    return {i + 2}\n")
        build(root, snapshots=1, **SMALL)
        assert stored() == named()
    assert first - stored()  # the first build's changed parts are gone with its bundle
    stray = vault.parts / "ab" / ("ab" + "0" * 62)
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"x")  # a part no index names (a killed build's)
    garbage = vault.dir / "snapshots" / "x"
    garbage.mkdir(parents=True)
    (garbage / EXPORT_INDEX).write_bytes(b"damaged")  # an index that cannot be read: nothing is removed
    assert provenance.prune_parts(vault) == 0 and stray.exists()
    (garbage / EXPORT_INDEX).unlink()
    # a link or a FIFO where an index is: not followed, not waited on; nothing is removed
    (garbage / EXPORT_INDEX).symlink_to(vault.export_index)
    assert provenance.prune_parts(vault) == 0 and stray.exists()
    (garbage / EXPORT_INDEX).unlink()
    os.mkfifo(garbage / EXPORT_INDEX)
    assert provenance.prune_parts(vault) == 0 and stray.exists()
    (garbage / EXPORT_INDEX).unlink()
    assert provenance.prune_parts(vault) == 1 and not stray.exists()
    assert hashlib.sha256(export_of(root)).hexdigest()  # the latest export still assembles, every part checked


def test_parts_that_came_with_the_tree_are_written_over_or_refused(tmp_path: Path) -> None:
    """A clone whose committed vault holds a part under the name this build's part will
    have, with other bytes: the first build (full) writes every part again, so the export
    assembles and verifies; a link standing for a folder of the store is refused, in one
    line, and nothing is written through it."""
    from oracl.bundle.verify import verify
    from oracl.core.errors import VaultError

    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, **SMALL)
    vault = Vault(root)
    index = decode_index(vault.export_index.read_bytes())
    planted = {d: (vault.parts / d[:2] / d) for d in digests(index)}
    clone = tmp_path / "clone"
    write_tree(clone, SAMPLE)
    for d, path in planted.items():  # the same names, bytes of the same length that are not theirs
        target = clone / ".oracl" / "parts" / d[:2] / d
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"x" * path.stat().st_size)
    build(clone, **SMALL)
    assert verify(clone)[0].startswith("latest: ")
    assert orjson.loads(export_of(clone))["schema"]["counts"]["nodes"] == index["header"]["counts"]["nodes"]
    outside = tmp_path / "outside"
    outside.mkdir()
    other = write_tree(tmp_path / "other", SAMPLE)
    (other / ".oracl" / "parts").mkdir(parents=True)
    for i in range(256):  # every folder a part can go to
        (other / ".oracl" / "parts" / f"{i:02x}").symlink_to(outside)
    with pytest.raises(VaultError, match="is a symbolic link"):
        build(other, **SMALL)
    assert list(outside.iterdir()) == []  # nothing landed outside the vault
    assert not Vault(other).latest.exists()


def test_a_long_lived_builder_knows_the_parts_it_checked_while_its_build_is_the_latest(tmp_path: Path) -> None:
    """``keep_known``: while a long-lived builder's memory is the latest build's, its
    stores share the digests known to be in the store from one build to the next (and a
    part its prune removes is forgotten); a build by anyone else makes it forget them all."""
    from oracl.builder.incremental import Carry
    from oracl.core import parts

    root = write_tree(tmp_path / "r", SAMPLE)
    vault = Vault(root)
    carry = Carry()
    build(root, carry=carry, **SMALL)  # (the first: nothing known yet, its memory not the latest's)
    assert parts._KNOWN.get(vault.parts) is None and parts.store_of(vault.dir).seen == set()
    for i in range(3):
        (root / "pkg" / "util.py").write_text(f"def helper():\n    return {i + 2}\n")
        build(root, carry=carry, **SMALL)
        known = parts._KNOWN[vault.parts]
        assert parts.store_of(vault.dir).seen is known  # (one set, shared by every store of this vault)
        on_disk = {p.name for p in vault.parts.rglob("*") if p.is_file()}
        assert known and known <= on_disk  # (the parts the prune removed are forgotten)
    (root / "pkg" / "util.py").write_text("def helper():\n    return 9\n")
    build(root, **SMALL)  # another builder's build: the long-lived one's memory is no longer the latest's
    assert vault.parts not in parts._KNOWN
    (root / "pkg" / "util.py").write_text("def helper():\n    return 10\n")
    build(root, carry=carry, **SMALL)
    assert vault.parts not in parts._KNOWN and parts.store_of(vault.dir).seen == set()
    build(root, carry=carry, **SMALL)  # (up to date, its memory the latest's again: known from here on)
    assert parts.store_of(vault.dir).seen is parts._KNOWN[vault.parts]
    assert hashlib.sha256(export_of(root)).hexdigest()
