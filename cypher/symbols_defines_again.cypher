// Selective rebuild: the Defines edges made again from Symbol's rows, once Artifact is
// loaded again (a join in the engine: no rows leave it).
MATCH (a:Artifact), (s:Symbol) WHERE a.path = s.path CREATE (a)-[:Defines]->(s);
