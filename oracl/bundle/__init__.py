"""A build's bundle: the writer, its tables, provenance, verify and repair."""
