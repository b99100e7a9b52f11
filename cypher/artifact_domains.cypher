// name: artifact_domains
// params: paths LIST(STRING)
// returns: path, domain and priority of each named artifact
MATCH (a:Artifact) WHERE a.path IN $paths
MATCH (t:ArtifactText {key: a.path + '|' + CAST(a.text_n AS STRING)})
RETURN a.path AS path, a.domain AS domain, /*=own(a)*/ AS priority, t.checksum AS checksum;
