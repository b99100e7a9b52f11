"""A parser generated from the engine's own openCypher grammar (Kùzu 0.11.3's
``Cypher.g4`` and ``keywords.txt``, by ANTLR 4.13.2): ``CypherLexer.py`` and
``CypherParser.py`` are generated files (``VENDOR.json`` says from what; ``python
scripts/vendor_cypher_grammar.py --check`` regenerates and compares them). The console's
gate, ``oracl.face.readonly``, is their only user."""
