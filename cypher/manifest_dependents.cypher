// name: manifest_dependents
// params: paths LIST(STRING) (package manifests: Cargo.toml, package.json, …)
// returns: the manifests that declare a dependency on the named ones (a Rust crate's dependents)
MATCH (a:Artifact)-[l:Link]->(b:Artifact)
WHERE b.path IN $paths AND l.relation = 'depends_on'
RETURN b.path AS target, a.path AS source
ORDER BY target, source;
