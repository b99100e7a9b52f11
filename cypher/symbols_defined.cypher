// Selective rebuild: every symbol's file, to load the Defines edges again after Artifact is.
MATCH (s:Symbol) RETURN s.path AS `from`, s.id AS `to`;
