// Selective rebuild in the standby (which keeps its Artifact rows and its Defines edges): the
// Defines edge of a symbol just made.
MATCH (a:Artifact {path: $path}), (s:Symbol {id: $id}) CREATE (a)-[:Defines]->(s);
