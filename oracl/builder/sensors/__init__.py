"""Sensor adapters (design §5d): the reports CI already writes, turned into observations
with names only; ``ingest`` maps them to the build's files and stores GraduatedEvents.

One adapter per format, each ``parse(data) -> list[Observation]`` on a library made for
it: JUnit XML and Cobertura through ``defusedxml`` (entity expansion and external
entities refused), SARIF 2.1.0 and coverage.py JSON through ``orjson``, LCOV line by line.
"""
