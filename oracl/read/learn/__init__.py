"""The learning loop of design §9: what was used after a search (``usage``), what the
logs teach (``mine``), and the review that stands between a proposal and the graph
(``review``)."""
