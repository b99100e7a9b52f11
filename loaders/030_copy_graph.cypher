// The graph itself, COPY from Arrow tables (never row by row). Order matters: rel
// tables need both endpoint tables loaded.
COPY Artifact FROM $artifacts;
COPY ArtifactText FROM $artifact_text;
COPY Hub FROM $hubs;
COPY History FROM $history;
COPY Link FROM $links;
COPY BelongsTo FROM $belongs;
COPY Symbol FROM $symbols;
COPY SymbolName FROM $symbol_names;
COPY Defines FROM $defines;
COPY Contains FROM $contains;
COPY Calls FROM $calls;
COPY Inherits FROM $inherits;
COPY References FROM $references;
