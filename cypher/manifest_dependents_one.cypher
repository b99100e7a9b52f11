// name: manifest_dependents_one
// params: path STRING (a package manifest)
// (one path: an equality uses the primary-key index, where IN scans the table)
// returns: the manifests that declare a dependency on the named one (a Rust crate's dependents)
MATCH (a:Artifact)-[l:Link]->(b:Artifact)
WHERE b.path = $path AND l.relation = 'depends_on'
RETURN b.path AS target, a.path AS source
ORDER BY target, source;
