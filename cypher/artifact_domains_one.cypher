// name: artifact_domains_one
// params: path STRING
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: path, domain and priority of each named artifact
MATCH (a:Artifact {path: $path})
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, a.domain AS domain, /*=own(a)*/ AS priority, t.checksum AS checksum;
