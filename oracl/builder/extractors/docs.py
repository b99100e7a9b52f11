"""Documentation and markup scanners (design §3b): reStructuredText, AsciiDoc, HTML and the
template languages (Jinja, EJS, ERB, Go templates, Handlebars). Each gives the headings of
its sections and the references it makes, as ``Ref`` = (kind, target as written, line):

* ``doc``      – a document by name (``:doc:``, a ``toctree`` entry; suffix optional);
* ``ref``      – a reStructuredText label (``:ref:`` → the file with ``.. _label:``);
* ``include``  – a file by path (``include``, ``literalinclude``, AsciiDoc ``include::``,
  ``xref:``, an HTML ``href``/``src``);
* ``module``   – a documented code object (``automodule``, ``autoclass``, ``:func:`` …);
* ``template`` – a template by name (``extends``, ``include``, ``import``, partials).

Line-based on purpose: markup is read for its references and headings only, and a
malformed page still yields them. Labels and Go ``define`` names go to ``manifest``.

>>> heads, refs, _ = scan_markup("rst", "Title\\n=====\\n\\nSee :doc:`guide` and\\n.. automodule:: flask.app\\n")
>>> heads, refs
((('Title', 1, 1, 5),), (('doc', 'guide', 4), ('module', 'flask.app', 5)))
"""

from __future__ import annotations

import re

from oracl.builder.extractors.scan import sections
from oracl.core.records import Heading, Ref

MAX_REFS = 2000
_RST_ADORN = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")
_RST_ROLE = re.compile(r":(doc|ref|(?:py:)?(?:func|class|meth|mod|attr|exc|data|obj)):`([^`]+)`")
_RST_DIRECTIVE = re.compile(r"^\s*\.\.\s+(include|literalinclude|automodule|autoclass|autofunction|automethod"
                            r"|autoexception|autodata|autoattribute|module|currentmodule|toctree"
                            r"|py:module|py:class|py:function)::\s*(\S*)")
_RST_LABEL = re.compile(r"^\s*\.\.\s+_([^:]+):\s*$")
_ADOC_HEADING = re.compile(r"^(={1,6})\s+(\S.*)$")
_ADOC_REF = re.compile(r"(?:include::|xref:|link:)([^\[\s]+)\[|<<([^,>#]+\.adoc)(?:#[^,>]*)?[,>]")
_HTML_HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.I | re.S)
_HTML_LINK = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"'#?{}<>$]+)""", re.I)
_TAGS = re.compile(r"<[^>]+>")
_TEMPLATE = {
    "jinja": re.compile(r"""\{%-?\s*(?:extends|include|import|from)\s+["']([^"']+)["']"""),
    "ejs": re.compile(r"""<%[-=_]?\s*include\s*\(?\s*["']([^"']+)["']"""),
    "erb": re.compile(r"""\brender\s*\(?\s*(?:partial:\s*|:partial\s*=>\s*|template:\s*)?["']([^"']+)["']"""),
    "gotemplate": re.compile(r"""\{\{-?\s*(?:template|block)\s+["']([^"']+)["']"""),
    "handlebars": re.compile(r"""\{\{#?>\s*([\w./-]+)"""),
}
_GO_DEFINE = re.compile(r"""\{\{-?\s*(?:define|block)\s+["']([^"']+)["']""")


def _rst(text: str) -> tuple[tuple[Heading, ...], tuple[Ref, ...], dict[str, object]]:
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []
    found: list[tuple[str, int, int]] = []
    refs: list[Ref] = []
    labels: list[str] = []
    in_toctree = False
    for i, line in enumerate(lines):
        n = i + 1
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        title = line.strip()
        if title and not _RST_ADORN.match(line) and _RST_ADORN.match(nxt) and len(nxt.strip()) >= len(title) \
                and not line.startswith((" ", "\t", "..")):
            over = i > 0 and _RST_ADORN.match(lines[i - 1]) is not None and lines[i - 1].strip()[0] == nxt.strip()[0]
            style = (nxt.strip()[0], over)
            if style not in styles:
                styles.append(style)
            found.append((title, styles.index(style) + 1, n - 1 if over else n))
        m = _RST_LABEL.match(line)
        if m:
            labels.append(m.group(1).strip().lower())
        m = _RST_DIRECTIVE.match(line)
        if m:
            kind, arg = m.group(1), m.group(2)
            in_toctree = kind == "toctree"
            if kind in ("include", "literalinclude") and arg:
                refs.append(("include", arg, n))
            elif kind not in ("toctree",) and arg:
                refs.append(("module", arg.split("(", 1)[0], n))
            continue
        if in_toctree:
            entry = line.strip()
            if line and not line[0].isspace():
                in_toctree = False
            elif entry and not entry.startswith(":") and not entry.startswith(".."):
                target = re.sub(r"^.*<(.+)>$", r"\1", entry)
                if "://" not in target and target != "self":
                    refs.append(("doc", target, n))
        for m in _RST_ROLE.finditer(line):
            role, target = m.group(1), m.group(2)
            target = re.sub(r"^.*<(.+)>$", r"\1", target).lstrip("~!.")
            if role == "doc":
                refs.append(("doc", target, n))
            elif role == "ref":
                refs.append(("ref", target.lower(), n))
            else:
                refs.append(("module", target.rstrip("()"), n))
        if len(refs) >= MAX_REFS:
            break
    return sections(found, len(lines)), tuple(refs), ({"rst_labels": labels} if labels else {})


def _asciidoc(text: str) -> tuple[tuple[Heading, ...], tuple[Ref, ...], dict[str, object]]:
    lines = text.splitlines()
    found: list[tuple[str, int, int]] = []
    refs: list[Ref] = []
    in_block = False
    for n, line in enumerate(lines, 1):
        if line.startswith(("----", "....")):
            in_block = not in_block
        if in_block:
            continue
        m = _ADOC_HEADING.match(line)
        if m:
            found.append((m.group(2).strip(), len(m.group(1)), n))
        for m in _ADOC_REF.finditer(line):
            target = m.group(1) or m.group(2)
            if "://" not in target and "{" not in target:
                refs.append(("include", target, n))
    return sections(found, len(lines)), tuple(refs[:MAX_REFS]), {}


def _html(text: str, template: str) -> tuple[tuple[Heading, ...], tuple[Ref, ...], dict[str, object]]:
    refs: list[Ref] = []
    found: list[tuple[str, int, int]] = []
    for m in _HTML_HEADING.finditer(text):
        title = " ".join(_TAGS.sub("", m.group(2)).split())
        if title:
            found.append((title[:200], int(m.group(1)), text.count("\n", 0, m.start()) + 1))
    for m in _HTML_LINK.finditer(text):
        target = m.group(1).strip()
        if target and "://" not in target and not target.startswith(("mailto:", "data:", "javascript:", "//")):
            refs.append(("include", target, text.count("\n", 0, m.start()) + 1))
    pattern = _TEMPLATE.get(template)
    manifest: dict[str, object] = {}
    for kind in ([template] if pattern else []):
        for m in _TEMPLATE[kind].finditer(text):
            refs.append(("template", m.group(1), text.count("\n", 0, m.start()) + 1))
    if template == "gotemplate":
        defines = sorted(set(_GO_DEFINE.findall(text)))
        if defines:
            manifest["template_defines"] = defines
    return sections(found, text.count("\n") + 1), tuple(refs[:MAX_REFS]), manifest


def scan_markup(language: str, text: str, path: str = "") -> tuple[tuple[Heading, ...], tuple[Ref, ...], dict[str, object]]:
    """(headings, refs, manifest) of a markup file; empty for any other language."""
    if language == "rst":
        return _rst(text)
    if language == "asciidoc":
        return _asciidoc(text)
    if language in ("html", "jinja", "ejs", "erb", "gotemplate", "handlebars", "vue", "svelte"):
        template = language
        if language == "html" and "{%" in text:
            template = "jinja"
        elif language == "html" and "{{" in text and ("{{template" in text.replace(" ", "") or "{{define" in text.replace(" ", "")):
            template = "gotemplate"
        return _html(text, template)
    return (), (), {}
