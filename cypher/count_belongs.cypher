// name: count_belongs
// params: (none)
// returns: n
MATCH ()-[b:BelongsTo]->() RETURN count(b) AS n;
