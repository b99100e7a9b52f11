"""Code extractors for every language but Python, on tree-sitter grammars (design §3b).

One interface for every language: ``extract(language, text) -> CodeFacts`` – symbols
(name, kind, line range; qualified name, signature and first doc line beside them),
imports as written (resolved to files later, per ecosystem, by ``oracl.builder.extractors.ecosystems``),
raw call sites, the packages or namespaces the file declares, and test markers.
Python keeps its own ``ast`` analyzer (``python_ast.analyze_python``), whose results
the reader (``pipeline/discover.py``) lays into the same ``FileFacts`` fields.

Grammars come from ``tree-sitter-language-pack`` 0.13.0 (pinned: it bundles its
grammars; the 1.x line downloads them at run time). A grammar is loaded on the first file
of its language, so a tree without Go never loads Go. Each language is one tree-sitter
query whose capture names say what a node is:

* ``@def.KIND`` with ``@name`` – a definition (``@def.impl`` / ``@def.extension`` only
  qualify what they contain: ``impl T for S { fn f }`` defines ``S.f``);
* ``@import`` – the node whose text is an import, an include, a ``require``;
* ``@call`` – the name node of a call's callee (``f`` of ``a.b.f(x)``): the call is kept as
  ``f`` (a bare call), ``b.f`` (called on the name ``b``: a receiver, a module, a type) or
  ``?.f`` (called on an expression);
* ``@ns`` – a declared package or namespace.

>>> facts = extract("go", "package p\\n// Run runs.\\nfunc Run() { helper() }\\n")
>>> facts.symbols, facts.details[0], facts.calls, facts.namespaces
((('Run', 'function', 3, 3),), ('Run', 'func Run()', 'Run runs.'), (('helper', 3),), ('p',))
>>> extract("java", "class A extends B implements C { void f() { this.g(); } }").bases
(('A', 'B', 'inherits', 1), ('A', 'C', 'implements', 1))
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from oracl.core.paths import LANGUAGE_OF_SUFFIX
from oracl.core.records import Base, ImportRef, Mention, Symbol, SymbolDetail, Typed

MAX_CALLS = 5000          # call sites kept per file
MAX_SYMBOLS = 5000        # definitions kept per file
SIGNATURE_CHARS = 200
DOC_CHARS = 160

CONTAINERS = frozenset({"class", "interface", "struct", "enum", "trait", "module", "namespace",
                        "object", "impl", "extension", "protocol", "record"})
TYPES = CONTAINERS - {"module", "namespace"}  # a function inside one of these is a method
QUALIFY_ONLY = frozenset({"impl", "extension"})
FUNCTIONS = frozenset({"function", "method"})

_JS_DEFS = """
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(assignment_expression left: (member_expression object: (_) @receiver property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @def.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(program ([(lexical_declaration (variable_declarator name: (identifier) @name value: (call_expression
  arguments: (arguments [(arrow_function) (function_expression)]))) @def.factory)
  (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name
  value: (call_expression arguments: (arguments [(arrow_function) (function_expression)]))) @def.factory))]))
(import_statement source: (string (string_fragment) @import))
(export_statement source: (string (string_fragment) @import))
(call_expression function: (identifier) @_req arguments: (arguments . (string (string_fragment) @import))
  (#eq? @_req "require"))
(call_expression function: (import) arguments: (arguments . (string (string_fragment) @import)))
(call_expression function: [(identifier) @call (member_expression property: [(property_identifier)
  (private_property_identifier)] @call)])
(new_expression constructor: [(identifier) @call (member_expression property: (property_identifier) @call)])
(variable_declarator name: (identifier) @var value: (new_expression constructor: [(identifier) @vtype
  (member_expression property: (property_identifier) @vtype)]))
(assignment_expression left: (member_expression property: (property_identifier) @var)
  right: (new_expression constructor: [(identifier) @vtype (member_expression property: (property_identifier) @vtype)]))
(variable_declarator name: (identifier) @var value: [
  (call_expression function: [(identifier) @vcall (member_expression property: (property_identifier) @vcall)])
  (await_expression (call_expression function: [(identifier) @vcall
    (member_expression property: (property_identifier) @vcall)]))])
"""
_TS_DEFS = _JS_DEFS + """
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(abstract_class_declaration name: (_) @name) @def.class
(internal_module name: (_) @name) @def.namespace
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(function_signature name: (_) @name) @def.function
(required_parameter pattern: (identifier) @var type: (type_annotation [(type_identifier) @vtype
  (generic_type name: (type_identifier) @vtype)]))
(optional_parameter pattern: (identifier) @var type: (type_annotation [(type_identifier) @vtype
  (generic_type name: (type_identifier) @vtype)]))
(public_field_definition name: (property_identifier) @var type: (type_annotation [(type_identifier) @vtype
  (generic_type name: (type_identifier) @vtype)]))
(variable_declarator name: (identifier) @var type: (type_annotation [(type_identifier) @vtype
  (nested_type_identifier name: (type_identifier) @vtype)
  (generic_type name: [(type_identifier) @vtype (nested_type_identifier name: (type_identifier) @vtype)])]))
"""

QUERIES: dict[str, str] = {
    "go": """
(package_clause (package_identifier) @ns)
(function_declaration name: (identifier) @name) @def.function
(method_declaration receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (function_type)
  (map_type) (slice_type) (pointer_type) (generic_type) (array_type) (channel_type)]) @def.type
(method_elem name: (field_identifier) @name) @def.method
(import_spec path: (interpreted_string_literal (interpreted_string_literal_content) @import))
(call_expression function: [(identifier) @call (selector_expression field: (field_identifier) @call)])
(parameter_declaration name: (identifier) @var type: [(type_identifier) @vtype
  (pointer_type [(type_identifier) @vtype (qualified_type name: (type_identifier) @vtype)])
  (qualified_type name: (type_identifier) @vtype)])
(short_var_declaration left: (expression_list . (identifier) @var) right: (expression_list . [
  (composite_literal type: [(type_identifier) @vtype (qualified_type name: (type_identifier) @vtype)])
  (unary_expression operand: (composite_literal type: [(type_identifier) @vtype
    (qualified_type name: (type_identifier) @vtype)]))
  (type_assertion_expression type: [(type_identifier) @vtype (pointer_type (type_identifier) @vtype)])]))
(var_spec name: (identifier) @var type: [(type_identifier) @vtype (pointer_type (type_identifier) @vtype)
  (qualified_type name: (type_identifier) @vtype)])
(short_var_declaration left: (expression_list . (identifier) @var) right: (expression_list .
  (call_expression function: [(identifier) @vcall (selector_expression field: (field_identifier) @vcall)])))
(var_spec name: (identifier) @var value: (expression_list . [
  (composite_literal type: [(type_identifier) @vtype (qualified_type name: (type_identifier) @vtype)])
  (unary_expression operand: (composite_literal type: [(type_identifier) @vtype
    (qualified_type name: (type_identifier) @vtype)]))]))
(range_clause left: (expression_list (_) (identifier) @var .) right: (call_expression function: [
  (identifier) @vcall (selector_expression field: (field_identifier) @vcall)]))
(range_clause left: (expression_list (_) (identifier) @var .) right: (identifier) @vsame)
""",
    "javascript": _JS_DEFS,
    "typescript": _TS_DEFS,
    "tsx": _TS_DEFS,
    "rust": """
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.struct
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(mod_item name: (identifier) @name body: (declaration_list)) @def.module
(mod_item name: (identifier) @import !body)
(macro_definition name: (identifier) @name) @def.macro
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.constant
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name)
  (scoped_type_identifier name: (type_identifier) @name)]) @def.impl
(use_declaration argument: (_) @import)
(extern_crate_declaration name: (identifier) @import)
(call_expression function: [(identifier) @call (field_expression field: (field_identifier) @call)
  (scoped_identifier name: (identifier) @call)
  (generic_function function: [(identifier) @call (scoped_identifier name: (identifier) @call)
    (field_expression field: (field_identifier) @call)])])
(macro_invocation macro: (identifier) @call)
(token_tree (identifier) @mcall . (token_tree))
""",
    "java": """
(package_declaration [(identifier) (scoped_identifier)] @ns)
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.record
(annotation_type_declaration name: (identifier) @name) @def.interface
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(import_declaration) @import
(method_invocation name: (identifier) @call)
(object_creation_expression type: [(type_identifier) @call (generic_type (type_identifier) @call)
  (scoped_type_identifier (type_identifier) @call .)])
(local_variable_declaration type: [(type_identifier) @vtype (generic_type (type_identifier) @vtype)]
  declarator: (variable_declarator name: (identifier) @var))
(field_declaration type: [(type_identifier) @vtype (generic_type (type_identifier) @vtype)]
  declarator: (variable_declarator name: (identifier) @var))
(formal_parameter type: [(type_identifier) @vtype (generic_type (type_identifier) @vtype)] name: (identifier) @var)
""",
    "kotlin": """
(package_header (identifier) @ns)
(class_declaration (type_identifier) @name) @def.class
(object_declaration (type_identifier) @name) @def.object
(function_declaration (simple_identifier) @name) @def.function
(type_alias (type_identifier) @name) @def.type
(import_header (identifier) @import)
(call_expression [(simple_identifier) @call
  (navigation_expression (navigation_suffix (simple_identifier) @call))])
(parameter (simple_identifier) @var (user_type (type_identifier) @vtype))
(property_declaration (variable_declaration (simple_identifier) @var (user_type (type_identifier) @vtype)))
(property_declaration (variable_declaration (simple_identifier) @var) (call_expression (simple_identifier) @vtype))
""",
    "scala": """
(package_clause name: (package_identifier) @ns)
(class_definition name: (identifier) @name) @def.class
(object_definition name: (identifier) @name) @def.object
(trait_definition name: (identifier) @name) @def.trait
(enum_definition name: (identifier) @name) @def.enum
(function_definition name: (identifier) @name) @def.function
(function_declaration name: (identifier) @name) @def.function
(type_definition name: (type_identifier) @name) @def.type
(import_declaration) @import
(call_expression function: [(identifier) @call (field_expression field: (identifier) @call)])
(instance_expression (type_identifier) @call)
""",
    "c": """
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator
  declarator: (identifier) @name))) @def.function
(declaration declarator: (function_declarator declarator: (identifier) @name)) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro
(preproc_def name: (identifier) @name) @def.constant
(preproc_include path: (_) @import)
(call_expression function: [(identifier) @call (field_expression field: (field_identifier) @call)])
""",
    "cpp": """
(function_definition declarator: (function_declarator declarator: [(identifier) (field_identifier)
  (qualified_identifier) (destructor_name) (operator_name)] @name)) @def.function
(function_definition declarator: (_ declarator: (function_declarator declarator: [(identifier)
  (field_identifier) (qualified_identifier)] @name))) @def.function
(field_declaration declarator: (function_declarator declarator: [(field_identifier) (identifier)] @name)) @def.method
(declaration declarator: (function_declarator declarator: [(identifier) (qualified_identifier)] @name)) @def.function
(class_specifier name: (_) @name body: (_)) @def.class
(struct_specifier name: (_) @name body: (_)) @def.struct
(union_specifier name: (_) @name body: (_)) @def.struct
(enum_specifier name: (_) @name body: (_)) @def.enum
(namespace_definition name: (_) @name) @def.namespace
(type_definition declarator: (type_identifier) @name) @def.type
(alias_declaration name: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro
(preproc_include path: (_) @import)
(call_expression function: [(identifier) @call (field_expression field: (field_identifier) @call)
  (qualified_identifier name: (identifier) @call)
  (template_function name: (identifier) @call)])
""",
    "csharp": """
(namespace_declaration name: (_) @ns) @def.namespace
(file_scoped_namespace_declaration name: (_) @ns)
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(struct_declaration name: (identifier) @name) @def.struct
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.record
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(property_declaration name: (identifier) @name) @def.property
(delegate_declaration name: (identifier) @name) @def.type
(using_directive) @import
(invocation_expression function: [(identifier) @call
  (member_access_expression name: (identifier) @call)
  (generic_name (identifier) @call)])
(object_creation_expression type: [(identifier) @call (generic_name (identifier) @call)])
(parameter type: [(identifier) @vtype (generic_name (identifier) @vtype)] name: (identifier) @var)
(variable_declaration type: [(identifier) @vtype (generic_name (identifier) @vtype)]
  (variable_declarator name: (identifier) @var))
""",
    "ruby": """
(module name: (_) @name) @def.module
(class name: (_) @name) @def.class
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
(call method: (identifier) @_req arguments: (argument_list . (string (string_content) @import))
  (#match? @_req "^(require|require_relative|load|autoload)$"))
(call method: (identifier) @call)
""",
    "php": """
(namespace_definition name: (namespace_name) @ns)
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
(namespace_use_declaration) @import
([(require_expression) (require_once_expression) (include_expression)
   (include_once_expression)] (_) @import)
(function_call_expression function: [(name) @call (qualified_name (name) @call .)])
(member_call_expression name: (name) @call)
(scoped_call_expression name: (name) @call)
(object_creation_expression [(name) @call (qualified_name (name) @call .)])
""",
    "swift": """
(class_declaration name: (type_identifier) @name) @def.class
(class_declaration name: (user_type (type_identifier) @name)) @def.extension
(protocol_declaration name: (type_identifier) @name) @def.protocol
(function_declaration name: (simple_identifier) @name) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.function
(typealias_declaration name: (type_identifier) @name) @def.type
(import_declaration (identifier) @import)
(call_expression [(simple_identifier) @call
  (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @call))])
""",
    "bash": """
(function_definition name: (word) @name) @def.function
(command name: (command_name (word) @_src) argument: [(word) (string) (raw_string)] @import
  (#match? @_src "^(source|\\\\.)$"))
(command name: (command_name (word) @call))
""",
}

CODE_LANGUAGES = frozenset(QUERIES) | {"python"}


@dataclass(frozen=True, slots=True)
class CodeFacts:
    """What one extractor yields for one file, in every language."""

    symbols: tuple[Symbol, ...] = ()
    details: tuple[SymbolDetail, ...] = ()   # (qualified name, signature, first doc line), as symbols
    imports: tuple[ImportRef, ...] = ()
    calls: tuple[Mention, ...] = ()           # (callee name, line)
    namespaces: tuple[str, ...] = ()
    test_markers: tuple[Mention, ...] = ()    # (marker, line): a test function, a test attribute …
    bases: tuple[Base, ...] = ()              # (type's qualified name, base as written, inherits|implements, line)
    typed: tuple[Typed, ...] = ()             # (variable, its declared or constructed type, line)
    documented: int = 0
    error: str = ""
    renames: tuple[tuple[str, str], ...] = ()  # (local name, imported name): ``import {a as b}``


@lru_cache(maxsize=None)
def _grammar(language: str) -> tuple[Any, Any]:
    """(parser, compiled query) of a language, loaded on first use."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language, get_parser

    return get_parser(language), Query(get_language(language), QUERIES[language])  # type: ignore[arg-type]


def _line(node: Any) -> int:
    return node.start_point[0] + 1


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


_WRAPPERS = frozenset({"type_declaration", "export_statement", "lexical_declaration", "variable_declaration",
                       "variable_declarator", "decorated_definition", "template_declaration", "const_declaration",
                       "expression_statement", "assignment_expression", "body_statement"})
_COMMENT_MARK = re.compile(r"^\s*(?:/\*\*?|\*/|\*|///?|//!|#+|--|%)\s?")


def _doc_of(node: Any) -> str:
    """The first line of the comment block right above a definition (attributes and
    annotations between them skipped)."""
    while node.prev_named_sibling is None and node.parent is not None and node.parent.parent is not None \
            and node.parent.type in _WRAPPERS:
        node = node.parent  # `// doc` above `type T struct`, `export function f`, `const f = () =>`
    prev = node.prev_named_sibling
    while prev is not None and prev.type in ("attribute_item", "annotation", "marker_annotation",
                                             "decorator", "attribute_list"):
        prev = prev.prev_named_sibling
    if prev is None or "comment" not in prev.type or prev.end_point[0] < node.start_point[0] - 1:
        return ""
    block = [prev]
    while True:
        above = block[-1].prev_named_sibling
        if above is None or "comment" not in above.type or above.end_point[0] < block[-1].start_point[0] - 1:
            break
        block.append(above)
    for c in reversed(block):
        for raw in _text(c).splitlines():
            line = _COMMENT_MARK.sub("", raw).strip().rstrip("*/").strip()
            if line and not line.startswith("@"):
                return line[:DOC_CHARS]
    return ""


_ANNOTATION_LINE = re.compile(r"^\s*(?:@[\w.]+(?:\(.*\))?|#!?\[.*\]|\[[\w.]+(?:\(.*\))?\])\s*$")


def _signature(node: Any, source: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    text = source[node.start_byte:min(end, node.start_byte + 4 * SIGNATURE_CHARS)].decode("utf-8", "replace")
    if body is None and "{" in text:
        text = text.split("{", 1)[0]
    lines = text.split("\n")
    while len(lines) > 1 and _ANNOTATION_LINE.match(lines[0]):
        lines.pop(0)  # `@CanIgnoreReturnValue`, `#[inline]`, `[Obsolete]` above the declaration
    text = "\n".join(lines)
    depth, cut = 0, len(text)
    for i, ch in enumerate(text):  # the first line break outside parentheses ends the signature
        depth += (ch in "([<") - (ch in ")]>")
        if ch == "\n" and depth <= 0:
            cut = i
            break
    sig = " ".join(text[:cut].split()).rstrip(" {=:")
    if len(sig) <= SIGNATURE_CHARS:
        return sig
    # long generics or parameters: keep what follows the last parenthesis (the declared
    # return type, which a call chain goes on through: zod's `discriminatedUnion<…>(…): ZodDiscriminatedUnion<…>`)
    tail = sig[sig.rfind(")"):] if ")" in sig else ""
    if not tail or len(tail) > SIGNATURE_CHARS // 2:
        return sig[:SIGNATURE_CHARS]
    return sig[:SIGNATURE_CHARS - len(tail) - 2] + " …" + tail


def extract(language: str, text: str) -> CodeFacts:
    """Parse one file of ``language`` (a key of ``QUERIES``) and read its facts."""
    parser, query = _grammar(language)
    source = text.encode("utf-8")
    tree = parser.parse(source)
    from tree_sitter import QueryCursor

    defs: list[tuple[int, int, int, int, str, str, Any, str]] = []
    imports: list[tuple[str, int, int, Any]] = []
    calls: list[Mention] = []
    typed: list[Typed] = []
    assigned: list[tuple[Any, Any]] = []  # (variable, function name) of `x = f()`
    same: list[tuple[Any, str]] = []  # (variable, the variable whose elements it takes)
    namespaces: list[str] = []
    for _, caps in QueryCursor(query).matches(tree.root_node):
        if "name" in caps:
            kind = next((k[4:] for k in caps if k.startswith("def.")), "")
            if not kind:
                continue
            node, name_node = caps["def." + kind][0], caps["name"][0]
            name = _text(name_node)
            if kind == "factory":  # `export const $ZodString = $constructor("…", (inst) => {…})`: a class
                kind = "class" if name.lstrip("$_")[:1].isupper() else "function"  # made by a call, or a function
            receiver = _text(caps["receiver"][0]) if "receiver" in caps else ""
            if receiver in _NOT_RECEIVERS or not _CHAIN.match(receiver):
                receiver = ""  # `module.exports.f = function`, `this.f = …`: a plain function
            defs.append((node.start_byte, -node.end_byte, _line(node), node.end_point[0] + 1, kind,
                         name, node, receiver))
        elif "import" in caps:
            for n in caps["import"]:
                imports.append((_text(n), _line(n), n.end_point[0] + 1, n))
        elif "var" in caps and "vtype" in caps:
            vtype = _text(caps["vtype"][0])
            # Go types may be unexported; zod's `$constructor` is a type
            if len(typed) < MAX_CALLS and (vtype[:1].isupper() or vtype[:1] == "$" or language == "go"):
                typed.append((_text(caps["var"][0]), vtype, _line(caps["var"][0])))
        elif "var" in caps and "vcall" in caps:  # `x = f()`: what f returns, resolved later
            assigned.append((caps["var"][0], caps["vcall"][0]))
        elif "var" in caps and "vsame" in caps:  # Go's `for _, x := range xs`: x is what xs holds
            same.append((caps["var"][0], _text(caps["vsame"][0])))
        elif "mcall" in caps:  # a call inside a macro's tokens: `assert_eq!(r.route("/"), …)`
            callee = _token_call(caps["mcall"][0])
            if callee and len(calls) < MAX_CALLS:
                calls.append((callee, _line(caps["mcall"][0])))
        elif "call" in caps:
            if len(calls) < MAX_CALLS:
                n = caps["call"][0]
                calls.append((_callee(n), _line(n)))
        elif "ns" in caps:
            namespaces.append(_text(caps["ns"][0]))
    symbols, details, documented, bases = _qualify(sorted(defs, key=lambda d: (d[0], d[1])), source, language)
    refs = tuple(r for spec, a, b, node in imports for r in _import_refs(language, spec, a, b, node))
    markers = _test_markers(language, text, symbols, calls)
    error = "syntax errors in the tree" if tree.root_node.has_error else ""
    renames = tuple(dict.fromkeys(r for spec, _, _, node in imports for r in _js_renames(node, spec.strip()))) \
        if language in ("javascript", "typescript", "tsx") else ()
    typed = _variable_types(typed, assigned, same, calls)
    return CodeFacts(symbols, details, refs, tuple(sorted(set(calls), key=lambda c: (c[1], c[0]))),
                     tuple(dict.fromkeys(namespaces)), markers, bases,
                     tuple(sorted(set(typed), key=lambda v: (v[2], v[0]))), documented, error, renames)


_PUNCT = frozenset({".", "->", "::", "?.", "(", ")", "new", "&", "*", "!", "comment", "line_comment", "block_comment"})
_NOT_RECEIVERS = frozenset({"exports", "module.exports", "this", "window", "self", "globalThis", "global"})
_CHAIN = re.compile(r"^[\w$]+(?:\s*(?:\.|::|->|\?\.)\s*[\w$]+)*$")
_LAST = re.compile(r"[\w$]+$")


def _callee(node: Any) -> str:
    """A call site as kept: ``f``, ``recv.f`` (the last name of a receiver written as a
    chain of names: ``self.session.send`` → ``session.send``) or ``?.f``."""
    name = _text(node)
    parent = node.parent
    if parent is not None and parent.type == "navigation_suffix":
        parent = parent.parent
    if parent is None:
        return name
    before = [c for c in parent.children if c.end_byte <= node.start_byte and c.type not in _PUNCT]
    first = before[0] if before else None  # `this` is an unnamed node in some grammars
    if first is None or first.type in ("arguments", "argument_list", "value_arguments", "new"):
        return name
    if parent.type in ("call_expression", "new_expression", "invocation_expression", "instance_expression",
                       "function_call_expression", "object_creation_expression", "command"):
        return name  # the callee is the call's own first child: a bare call
    text = _text(first)
    if text.startswith("super(") or text == "super":
        return f"super.{name}"  # Python's super().f(), Java's super.f()
    if len(text) <= 120 and _CHAIN.match(text):
        return f"{_LAST.search(text).group(0)}.{name}"  # type: ignore[union-attr]
    chain = _chain(first)
    return f"?~{chain}.{name}" if chain else f"?.{name}"


_NEW = frozenset({"object_creation_expression", "new_expression", "instance_creation_expression"})
_CALLS = frozenset({"method_invocation", "call_expression", "invocation_expression", "call"})
MAX_CHAIN = 6


def _chain(node: Any, depth: int = 0) -> str:
    """A call's receiver that is itself a call, as steps the resolver follows through
    declared return types: ``new GsonBuilder().setPrettyPrinting()`` →
    ``new GsonBuilder~setPrettyPrinting``, ``builder.a().b()`` → ``builder~a~b``; "" when it
    is not such a chain."""
    if depth > MAX_CHAIN:
        return ""
    if node.type in ("parenthesized_expression",) and node.named_child_count == 1:
        return _chain(node.named_children[0], depth + 1)
    if node.type in _NEW:
        typ = node.child_by_field_name("type") or node.child_by_field_name("constructor")
        name = _LAST.search(_text(typ)) if typ is not None else None
        return f"new {name.group(0)}" if name and _CHAIN.match(_text(typ).split("<", 1)[0]) else ""
    if node.type not in _CALLS:
        text = _text(node)
        last = _LAST.search(text) if _CHAIN.match(text) else None
        return last.group(0) if last else ""
    fn = node.child_by_field_name("function")
    obj, name_node = node.child_by_field_name("object"), node.child_by_field_name("name")
    if fn is not None and fn.type in ("member_expression", "field_expression", "selector_expression", "attribute"):
        obj = fn.child_by_field_name("object") or fn.child_by_field_name("value") or fn.child_by_field_name("operand")
        name_node = fn.child_by_field_name("property") or fn.child_by_field_name("field") or fn.child_by_field_name("attribute")
    elif fn is not None and obj is None:
        if fn.type == "scoped_identifier" and re.fullmatch(r"\w+::\w+", _text(fn)):
            return f"{_text(fn).replace('::', '.')}()"  # Rust's `Router::new()`: what the associated fn returns
        return f"{_text(fn)}()" if re.fullmatch(r"[\w$]+", _text(fn)) else ""
    if name_node is None:
        return ""
    if obj is None:
        return f"{_text(name_node)}()"
    inner = _chain(obj, depth + 1)
    return f"{inner}~{_text(name_node)}" if inner else ""


# clause → relation: where each grammar writes what a type extends or implements
_HERITAGE = {"superclass": "inherits", "super_interfaces": "implements", "extends_interfaces": "inherits",
             "extends_clause": "inherits", "implements_clause": "implements", "base_list": "inherits",
             "base_class_clause": "inherits", "delegation_specifier": "inherits",
             "inheritance_specifier": "inherits", "base_clause": "inherits", "class_interface_clause": "implements",
             "extends_type_clause": "inherits"}
_HERITAGE_WRAPPERS = frozenset({"class_heritage", "delegation_specifiers", "type_inheritance_clause"})
_TYPE_NAMES = frozenset({"type_identifier", "identifier", "constant", "name", "simple_identifier",
                         "property_identifier"})
_QUALIFIED = frozenset({"scoped_type_identifier", "qualified_name", "scoped_identifier", "qualified_identifier",
                        "member_expression", "user_type", "nested_identifier", "scope_resolution", "generic_type",
                        "navigation_expression", "qualified_type"})
_SKIP = frozenset({"type_arguments", "type_argument_list", "arguments", "argument_list", "value_arguments",
                   "template_argument_list", "type_parameters"})


def _type_names(node: Any) -> list[str]:
    """The type names a heritage clause lists (``pkg.Base<T>`` → ``Base``)."""
    if node.type in _SKIP:
        return []
    if node.named_child_count == 0:
        return [_text(node)] if node.type in _TYPE_NAMES else []
    if node.type in _QUALIFIED:
        inner = [n for c in node.named_children for n in _type_names(c)]
        return inner[:1] if node.type == "generic_type" else inner[-1:]
    return [n for c in node.named_children for n in _type_names(c)]


def _heritage(node: Any) -> list[tuple[str, str]]:
    """(base name, inherits|implements) of a type definition node."""
    out: list[tuple[str, str]] = []
    stack = list(node.children)
    while stack:
        c = stack.pop(0)
        if c.type == "class_heritage" and c.named_child_count and c.named_children[0].type not in _HERITAGE:
            out.extend((n, "inherits") for n in _type_names(c.named_children[0])[-1:])  # JavaScript: `extends X`
        elif c.type in _HERITAGE_WRAPPERS:
            stack[:0] = list(c.children)
        elif c.type in _HERITAGE:
            out.extend((n, _HERITAGE[c.type]) for n in _type_names(c))
    return out


def _go_embedded(node: Any) -> list[tuple[str, str]]:
    """A Go struct's embedded fields and an interface's embedded interfaces: their methods
    are promoted, as a base's are inherited (``type Engine struct { RouterGroup }``:
    ``engine.POST()`` is RouterGroup's). A library's (``http.ResponseWriter``) as written."""
    body = node.child_by_field_name("type")
    if body is None:
        return []
    if body.type == "struct_type":
        lists = [c for c in body.children if c.type == "field_declaration_list"]
        fields = [f.child_by_field_name("type") for f in (lists[0].children if lists else ())
                  if f.type == "field_declaration" and f.child_by_field_name("name") is None]
    elif body.type == "interface_type":
        fields = [e.named_children[0] for e in body.children if e.type == "type_elem" and e.named_child_count == 1]
    else:
        return []
    out = []
    for t in fields:
        while t is not None and t.type in ("pointer_type", "generic_type"):
            t = t.named_children[0] if t.type == "pointer_type" else t.child_by_field_name("type")
        if t is not None and t.type in ("type_identifier", "qualified_type"):
            out.append((_text(t), "inherits"))
    return out


def _qualify(defs: list, source: bytes, language: str
             ) -> tuple[tuple[Symbol, ...], tuple[SymbolDetail, ...], int, tuple[Base, ...]]:
    """Symbols with their qualified names: the names of the containers around them (and a
    Go method's receiver type); a function inside a container is a method. And what each
    type extends or implements (a Rust ``impl Trait for T``: T implements Trait)."""
    stack: list[tuple[int, str, str]] = []  # (end byte, name, kind) of the open containers
    symbols: list[Symbol] = []
    details: list[SymbolDetail] = []
    bases: list[Base] = []
    documented = 0
    seen: set[tuple[int, str]] = set()
    for start, neg_end, first, last, kind, name, node, receiver in defs:
        if (start, name) in seen:  # two patterns matched one node (C++ declarators)
            continue
        seen.add((start, name))
        while stack and stack[-1][0] <= start:
            stack.pop()
        short = re.split(r"::|\.", name)[-1] if language in ("cpp", "csharp", "ruby") else name
        scope = [n for _, n, _ in stack]
        in_type = bool(stack) and stack[-1][2] in TYPES
        if receiver:
            scope = [*scope, receiver]
        if "::" in name:
            scope = [*scope, *name.split("::")[:-1]]
        if language == "swift" and kind == "class" and node.child_count:
            kind = {"struct": "struct", "enum": "enum", "actor": "class"}.get(node.children[0].type, kind)
        if kind in CONTAINERS:
            stack.append((-neg_end, short, kind))
        if kind in TYPES:
            owner = ".".join([*scope, short])
            trait = node.child_by_field_name("trait") if kind == "impl" else None
            found = [(n, "implements") for n in _type_names(trait)] if trait is not None else (
                [] if kind in QUALIFY_ONLY else _go_embedded(node) if language == "go" else _heritage(node))
            bases.extend((owner, n, rel, first) for n, rel in found if n != short)
        if kind in QUALIFY_ONLY:
            continue
        if kind == "function" and (receiver or in_type):
            kind = "method"
        elif kind == "method" and not (receiver or in_type or language in ("ruby", "go")):
            kind = "function"
        qualified = ".".join([*scope, short])
        doc = _doc_of(node)
        documented += bool(doc) and kind in FUNCTIONS | CONTAINERS
        symbols.append((short, kind, first, last))
        details.append((qualified, _signature(node, source), doc))
        if len(symbols) >= MAX_SYMBOLS:
            break
    return tuple(symbols), tuple(details), documented, tuple(dict.fromkeys(bases))


_SCALA_GROUP = re.compile(r"^(.*)\.\{(.*)\}$")


def _import_refs(language: str, spec: str, start: int, end: int, node: Any) -> list[ImportRef]:
    """An import as written, as ``(module, names, level, start, end)``: ``level`` 1 marks a
    path relative to the file (``require_relative``, ``#include "…"``, ``mod x;``)."""
    spec = spec.strip()
    if language == "kotlin":
        wild = node.next_named_sibling is not None and node.next_named_sibling.type == "wildcard_import"
        return [(spec.replace(" ", "") + (".*" if wild else ""), (), 0, start, end)]
    if language == "java":
        body = re.sub(r"^import\s+(static\s+)?", "", spec).rstrip(";").strip()
        body = re.sub(r"\s+as\s+\w+$", "", body).replace(" ", "")
        return [(body, (), 0, start, end)] if body else []
    if language == "scala":
        body = re.sub(r"\s+", "", re.sub(r"^import\s+", "", spec))
        m = _SCALA_GROUP.match(body)
        if m:
            return [(f"{m.group(1)}.{n.split('=>')[0]}", (), 0, start, end)
                    for n in m.group(2).split(",") if n]
        return [(part.replace("._", ".*").removesuffix(".given"), (), 0, start, end)
                for part in body.split(",") if part]
    if language == "csharp":
        body = re.sub(r"^(global\s+)?using\s+(static\s+)?", "", spec).rstrip(";").strip()
        body = body.split("=", 1)[-1].strip()
        return [(body, (), 0, start, end)] if body else []
    if language == "php":
        if not spec.startswith("use"):
            return [(spec.strip("'\"()"), (), 1, start, end)]
        body = re.sub(r"^use\s+(function\s+|const\s+)?", "", spec).rstrip(";").strip()
        m = re.match(r"^(.*?)\\?\{(.*)\}$", body, re.S)
        names = ([f"{m.group(1).rstrip(chr(92))}\\{n.strip()}" for n in m.group(2).split(",") if n.strip()]
                 if m else body.split(","))
        return [(re.sub(r"\s+as\s+\w+$", "", n.strip()).lstrip("\\"), (), 0, start, end)
                for n in names if n.strip()]
    if language in ("c", "cpp"):
        if spec.startswith("<"):
            return [(spec.strip("<>"), (), 0, start, end)]
        return [(spec.strip('"'), (), 1, start, end)]
    if language == "rust":
        if node.type == "identifier" and node.parent is not None and node.parent.type == "mod_item":
            return [(spec, (), 1, start, end)]
        return [(p, (), 0, start, end) for p in _rust_paths(spec)]
    if language == "ruby":
        call = node.parent.parent.parent if node.parent and node.parent.parent else None
        method = call.child_by_field_name("method") if call is not None else None
        rel = method is not None and _text(method) == "require_relative"
        return [(spec, (), 1 if rel else 0, start, end)]
    if language == "bash":
        return [(spec.strip("'\""), (), 1, start, end)]
    if language in ("javascript", "typescript", "tsx"):
        return [(spec, _js_names(node), 0, start, end)]
    return [(spec, (), 0, start, end)]


def _js_clause(node: Any) -> list[Any]:
    """The parts of an ES import's clause (a default name, ``{…}``, ``* as ns``), read from
    the import's source string node; [] for anything but an ``import`` statement."""
    stmt = node.parent.parent if node.parent is not None else None
    if stmt is None or stmt.type != "import_statement":
        return []
    return [part for n in stmt.named_children if n.type == "import_clause" for part in n.named_children]


def _js_reexport(node: Any) -> Any:
    """The ``export … from "…"`` statement around an import's source string, or None."""
    stmt = node.parent.parent if node.parent is not None else None
    return stmt if stmt is not None and stmt.type == "export_statement" else None


def _js_names(node: Any) -> tuple[str, ...]:
    """The names an ES import brings in (``import d, {a, b as c} from …`` → d, a, b; a
    default import is looked up by its local name, which is most often the export's), and
    a re-export's: ``export {a, b as c} from …`` → a, b; ``export * from …`` → ``*`` (every
    name of that module is a name of this one: a barrel)."""
    stmt = _js_reexport(node)
    if stmt is not None:
        clause = next((n for n in stmt.named_children if n.type == "export_clause"), None)
        if clause is not None:
            return tuple(_text(n) for s in clause.named_children if s.type == "export_specifier"
                         and (n := s.child_by_field_name("name")) is not None)
        star = any(c.type == "*" for c in stmt.children)
        return ("*",) if star else ()
    out: list[str] = []
    for part in _js_clause(node):
        if part.type == "identifier":
            out.append(_text(part))
        elif part.type == "named_imports":
            out.extend(_text(s.child_by_field_name("name") or s) for s in part.named_children
                       if s.type == "import_specifier")
    return tuple(out)


def _js_renames(node: Any, module: str) -> list[tuple[str, str]]:
    """(local, imported) of an ES import's renamed names: ``import {a as b}`` → (b, a);
    ``import * as ns from "./m"`` → (ns, "*./m"): the module itself, under a name of the
    file's choosing."""
    out: list[tuple[str, str]] = []
    stmt = _js_reexport(node)
    for clause in (n for n in (stmt.named_children if stmt is not None else ()) if n.type == "export_clause"):
        for s in clause.named_children:  # `export {a as b} from "./m"`: b is a there
            name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
            if s.type == "export_specifier" and name is not None and alias is not None:
                out.append((_text(alias), _text(name)))
    for part in _js_clause(node):
        if part.type == "named_imports":
            for s in part.named_children:
                name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
                if s.type == "import_specifier" and name is not None and alias is not None:
                    out.append((_text(alias), _text(name)))
        elif part.type == "namespace_import":
            local = next((c for c in part.named_children if c.type == "identifier"), None)
            if local is not None:
                out.append((_text(local), "*" + module))
    return out


def _rust_paths(spec: str) -> list[str]:
    """``crate::a::{b, c::d}`` → ``crate::a::b``, ``crate::a::c::d`` (``as`` renames dropped)."""
    spec = re.sub(r"\s+", "", spec)
    spec = re.sub(r"as\w+(?=[,}]|$)", "", spec) if "as" in spec else spec
    if "{" not in spec:
        return [spec.removesuffix("::*")]
    head, _, rest = spec.partition("{")
    inner = rest[:rest.rfind("}")] if "}" in rest else rest
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "{") - (ch == "}")
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if not p:
            continue
        if p == "self":
            out.append(head.rstrip(":"))
        else:
            out.extend(_rust_paths(head + p))
    return out


# (needle, pattern): the pattern runs only over a text holding its needle
_TEST_TEXT = (
    ("@Test", re.compile(r"@(?:Test|ParameterizedTest)\b")),
    ("test]", re.compile(r"#\[(?:tokio::)?test\]")),
    ("cfg(test)", re.compile(r"#\[cfg\(test\)\]")),
    ("[", re.compile(r"\[(?:Fact|Theory|Test|TestMethod|TestCase)\b")),
    ("TEST", re.compile(r"^[ \t]*TEST(?:_F|_P)?[ \t]*\(", re.M)),
    ("@test", re.compile(r"^@test\b", re.M)),
    ("TestCase", re.compile(r"\bextends\s+(?:\\?PHPUnit\\Framework\\)?TestCase\b")),
    ("XCTestCase", re.compile(r"XCTestCase")),
)
_TEST_CALLS = frozenset({"describe", "it", "test", "suite", "context"})


def _test_markers(language: str, text: str, symbols: tuple[Symbol, ...], calls: list[Mention]) -> tuple[Mention, ...]:
    out: list[Mention] = []
    for name, kind, start, _ in symbols:
        if kind in FUNCTIONS and (name.startswith(("Test", "Benchmark", "Fuzz")) and language == "go"
                                  or name.startswith(("test_", "test")) and language in ("ruby", "php", "swift", "python")):
            out.append((name, start))
    if language in ("javascript", "typescript", "tsx", "ruby"):
        out.extend((c, line) for c, line in calls if c in _TEST_CALLS)  # bare calls only: `it(…)`, not `x.it(…)`
    for needle, pattern in _TEST_TEXT:
        if needle in text and (needle != "[" or "Fact" in text or "Test" in text or "Theory" in text):
            for m in pattern.finditer(text):
                out.append((m.group(0).strip()[:40], text.count("\n", 0, m.start()) + 1))
                if len(out) >= MAX_CALLS:
                    break
    return tuple(sorted(set(out), key=lambda m: (m[1], m[0])))[:MAX_CALLS]


_PY_TYPE = "[(identifier) @vtype (attribute attribute: (identifier) @vtype)]"
_PY_GENERIC = ("(generic_type (identifier) @vouter (type_parameter . (type [(identifier) @vtype "
               "(attribute attribute: (identifier) @vtype)])))")
_PY_CALLS = f"""
(call function: [(identifier) @call (attribute attribute: (identifier) @call)])
(assignment left: [(identifier) @var (attribute attribute: (identifier) @var)] right: (call function: {_PY_TYPE}))
(assignment left: (identifier) @var type: (type {_PY_TYPE}))
(typed_parameter (identifier) @var type: (type {_PY_TYPE}))
(typed_default_parameter name: (identifier) @var type: (type {_PY_TYPE}))
(typed_parameter (identifier) @var type: (type {_PY_GENERIC}))
(typed_default_parameter name: (identifier) @var type: (type {_PY_GENERIC}))
(assignment left: (attribute attribute: (identifier) @var) type: (type {_PY_TYPE}))
(assignment left: [(identifier) @var (attribute attribute: (identifier) @var)] type: (type {_PY_GENERIC}))
(as_pattern (call function: {_PY_TYPE}) alias: (as_pattern_target (identifier) @var))
(for_statement left: (identifier) @var right: [(identifier) @vsame (attribute attribute: (identifier) @vsame)])
"""
# `Optional[Session]`, `list[Tag]`: the element (what a loop over it yields); `Box[int]`: Box
_PY_CONTAINERS = frozenset({"list", "List", "Sequence", "MutableSequence", "Iterable", "Iterator", "Collection",
                            "set", "Set", "frozenset", "FrozenSet", "tuple", "Tuple", "Optional", "deque", "Deque",
                            "Generator", "AbstractSet", "MutableSet", "Type", "type"})


@lru_cache(maxsize=None)
def _python_calls_query() -> tuple[Any, Any]:
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language, get_parser

    return get_parser("python"), Query(get_language("python"), _PY_CALLS)


def _in_call(node: Any) -> bool:
    """Whether a name is the function of a call (``make`` of ``x = make()``, ``get`` of
    ``x = self.get()``), not an annotation (``x: int = 3``)."""
    up = node.parent
    if up is not None and up.type in ("attribute", "member_expression", "selector_expression"):
        up = up.parent
    return up is not None and up.type in ("call", "call_expression")


def python_calls(text: str) -> tuple[tuple[Mention, ...], tuple[Typed, ...]]:
    """Call sites of a Python module (``f``, ``recv.f``, ``?.f`` as for every language) and
    the variables whose type it says (``x = Cls(…)``, ``x: Cls``, ``with Cls() as x``), on
    the tree-sitter grammar: the ``ast`` analyzer reads statements only (walking every
    expression would triple its cost), and a text scan would take ``f(`` in a string or a
    comment for a call. A capitalised name is a type; ``x = make()`` / ``x = self.get()``
    is recorded as ``make()`` / ``self.get()``: what that returns, resolved later."""
    from tree_sitter import QueryCursor

    parser, query = _python_calls_query()
    tree = parser.parse(text.encode("utf-8"))
    out: list[Mention] = []
    typed: list[Typed] = []
    assigned: list[tuple[Any, Any]] = []  # (variable, function name) of `x = f()`
    same: list[tuple[Any, str]] = []  # (loop variable, the variable it ranges over)
    for _, caps in QueryCursor(query).matches(tree.root_node):
        if "call" in caps:
            if len(out) < MAX_CALLS:
                n = caps["call"][0]
                out.append((_callee(n), _line(n)))
        elif "var" in caps and "vsame" in caps:  # `for tag in self.order`: tag is what order holds
            same.append((caps["var"][0], _text(caps["vsame"][0])))
        elif "var" in caps and "vouter" in caps and len(typed) < MAX_CALLS:
            outer = _text(caps["vouter"][0])
            vtype = _text(caps["vtype"][0]) if outer in _PY_CONTAINERS else outer
            if vtype[:1].isupper():
                typed.append((_text(caps["var"][0]), vtype, _line(caps["var"][0])))
        elif "var" in caps and "vtype" in caps and len(typed) < MAX_CALLS:
            vtype = _text(caps["vtype"][0])
            if vtype[:1].isupper():
                typed.append((_text(caps["var"][0]), vtype, _line(caps["var"][0])))
            else:
                assigned.append((caps["var"][0], caps["vtype"][0]))
    typed = _variable_types(typed, assigned, same, out)
    return (tuple(sorted(set(out), key=lambda c: (c[1], c[0]))),
            tuple(sorted(set(typed), key=lambda v: (v[2], v[0]))))


def _token_call(node: Any) -> str:
    """A call written in a Rust macro invocation's tokens, kept as a call outside one is:
    ``f(…)`` → f, ``r.route(…)`` → r.route, ``Router::new(…)`` → Router.new, a call on a
    call's result → ?.name; "" when the name is not followed by ``(`` at once."""
    nxt = node.next_sibling
    if nxt is None or nxt.type != "token_tree" or not nxt.text.startswith(b"("):
        return ""
    name = _text(node)
    prev = node.prev_sibling
    if prev is None or prev.type not in (".", "::"):
        return name
    before = prev.prev_sibling
    if before is not None and before.type in ("identifier", "self", "super", "crate"):
        return f"{_text(before)}.{name}"
    step = before.prev_sibling if before is not None and before.type == "token_tree" and prev.type == "." else None
    if step is not None and step.type == "identifier" and before.text.startswith(b"("):
        # a call on a call's result, one step: `Router::new().route(…)`, `r.a().b(…)`, `make().go(…)`
        dot = step.prev_sibling
        head = dot.prev_sibling if dot is not None and dot.type in (".", "::") else None
        if head is None:
            return f"?~{_text(step)}().{name}" if dot is None or dot.type not in (".", "::") else f"?.{name}"
        if head.type in ("identifier", "self"):
            return (f"?~{_text(head)}.{_text(step)}().{name}" if dot.type == "::"
                    else f"?~{_text(head)}~{_text(step)}.{name}")
    return f"?.{name}"


def _variable_types(typed: list[Typed], assigned: list[tuple[Any, Any]], same: list[tuple[Any, str]],
                    calls: list[Mention]) -> list[Typed]:
    """Every language's last step: loop variables take their iterable's type (``_ranged``),
    then ``x = f()`` joins as ``f()`` unless ``x`` is declared on that line (``const x: T =
    f()``: T, as declared)."""
    if same:
        typed, assigned = _ranged(same, typed, assigned)
    declared = {(v, ln) for v, _, ln in typed}
    return [*typed, *(t for t in _assigned_calls(assigned, calls) if (t[0], t[2]) not in declared)]


def _ranged(same: list[tuple[Any, str]], typed: list[Typed],
            assigned: list[tuple[Any, Any]]) -> tuple[list[Typed], list[tuple[Any, Any]]]:
    """A loop variable (Go's ``for _, x := range xs``, Python's ``for x in self.xs``) takes
    the type its iterable was last given above it (the element type, as a slice's return
    type or a ``list[T]`` annotation is read), declared or assigned from a call."""
    typed, assigned = list(typed), list(assigned)
    for node, source in same:
        line = _line(node)
        last: tuple[int, Typed | None, Any] = (0, None, None)
        for t in typed:
            if t[0] == source and last[0] <= t[2] <= line:
                last = (t[2], t, None)
        for v, fn in assigned:
            if _text(v) == source and last[0] <= _line(v) <= line:
                last = (_line(v), None, fn)
        if last[1] is not None and len(typed) < MAX_CALLS:
            typed.append((_text(node), last[1][1], line))
        elif last[2] is not None:
            assigned.append((node, last[2]))
    return typed, assigned


def _assigned_calls(assigned: list[tuple[Any, Any]], calls: list[Mention]) -> list[Typed]:
    """``x = f()`` as (x, "f()", line), for the variables a call is made on (``x.g()``):
    the others would only make the facts larger (a fifth of them at 20k files when every
    one was kept), and their callee is read only for those."""
    receivers = {c[0].rpartition(".")[0] for c in calls if "." in c[0]}
    return [(var, _callee(fn) + "()", _line(v)) for v, fn in assigned
            if (var := _text(v)) in receivers and _in_call(fn)][:MAX_CALLS]


def language_of(path: str) -> str:
    """The programming language a file's name says, or ''."""
    name = path.rsplit("/", 1)[-1]
    if "." in name[1:]:
        return LANGUAGE_OF_SUFFIX.get(name.rsplit(".", 1)[1].lower(), "")
    return ""


def has_syntax_errors(path: str, text: str) -> bool | None:
    """Whether ``text`` (the file ``path``) parses with errors: Python by ``ast``, the other
    languages of ``language_of`` by their tree-sitter grammar; None for a file neither knows
    (an edit's ``syntax`` gate: no new syntax errors where the file parsed before)."""
    if path.endswith((".py", ".pyi")):
        import ast
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
        except (SyntaxError, ValueError):
            return True
        return False
    language = language_of(path)
    if language not in QUERIES:
        return None
    return bool(_grammar(language)[0].parse(text.encode("utf-8", "surrogatepass")).root_node.has_error)
