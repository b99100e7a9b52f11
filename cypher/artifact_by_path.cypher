// name: artifact_by_path
// params: path STRING
// returns: every stored column of one artifact, and its derived priority, δ and link density
MATCH (a:Artifact {path: $path})
MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n
RETURN a.path AS path, t.id AS id, t.checksum AS checksum, a.file_type AS file_type,
       a.size_bytes AS size_bytes, a.created_at AS created_at, a.modified_at AS modified_at,
       a.domain AS domain, a.component AS component, a.lifecycle AS lifecycle,
       a.classification AS classification, a.content_type AS content_type, a.format AS format,
       a.placeholder AS placeholder, a.parse_status AS parse_status, t.tags AS tags,
       /*=own(a)*/ AS priority, a.p_sum AS p_sum, a.p_mult AS p_mult, a.fresh_e AS fresh_e,
       a.m_role AS m_role, a.association AS association, a.degree AS degree,
       /*=delta(a)*/ AS delta, /*=density(a)*/ AS link_density, a.link_count AS link_count,
       a.backrefs AS backrefs, a.usage AS usage, a.line_count AS line_count, a.name AS name,
       t.symbols AS symbols, t.headings AS headings, t.detail AS detail, t.history AS history;
