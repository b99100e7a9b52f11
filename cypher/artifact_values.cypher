// name: artifact_values
// params: (none)
// returns: every distinct (domain, content_type, format, lifecycle) of the build's
//          artifacts (to name the values that exist when a filter value matches nothing)
MATCH (a:Artifact)
RETURN DISTINCT a.domain AS domain, a.content_type AS content_type, a.format AS format, a.lifecycle AS lifecycle;
