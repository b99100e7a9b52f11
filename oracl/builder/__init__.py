"""The build plane: the orchestrator, its executor, incremental planning, the phases (pipeline/) and the extractors."""
