// Selective rebuild: the base-class edges that start in the changed files.
MATCH (s:Symbol)-[e:Inherits]->(:Symbol) WHERE s.path IN $paths DELETE e;
