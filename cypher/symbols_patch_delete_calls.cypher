// Selective rebuild: the call edges that start in the changed files (they are made again).
MATCH (s:Symbol)-[e:Calls]->(:Symbol) WHERE s.path IN $paths DELETE e;
