// Selective rebuild: the containment edges that start in the changed files.
MATCH (s:Symbol)-[e:Contains]->(:Symbol) WHERE s.path IN $paths DELETE e;
