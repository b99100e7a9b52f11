// The graph itself, COPY from Arrow tables (never row by row). Order matters: rel
// tables need both endpoint tables loaded.
COPY Artifact FROM $artifacts;
COPY Hub FROM $hubs;
COPY Link FROM $links;
COPY BelongsTo FROM $belongs;
