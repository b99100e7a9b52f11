// Bulk load of a fresh bundle, from Arrow tables passed as parameters (never row by row).
// name: copy_nodes
COPY Artifact FROM $artifacts;
COPY Hub FROM $hubs;
COPY Content FROM $content;
COPY Link FROM $links;
COPY BelongsTo FROM $belongs;
