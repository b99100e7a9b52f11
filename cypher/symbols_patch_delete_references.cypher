// Selective rebuild: the signature-type edges that start in the changed files.
MATCH (s:Symbol)-[e:References]->(:Symbol) WHERE s.path IN $paths DELETE e;
