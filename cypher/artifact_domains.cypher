// name: artifact_domains
// params: paths LIST(STRING)
// returns: path, domain and priority of each named artifact
MATCH (a:Artifact) WHERE a.path IN $paths
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, a.domain AS domain, /*=own(a)*/ AS priority, t.checksum AS checksum;
