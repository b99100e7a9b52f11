// name: degree
// params: path STRING
// returns: the number of Link edges at an artifact, each way
OPTIONAL MATCH (a:Artifact {path: $path})-[o:Link]->(:Artifact)
WITH count(o) AS outgoing
OPTIONAL MATCH (a:Artifact {path: $path})<-[i:Link]-(:Artifact)
RETURN outgoing, count(i) AS incoming;
