"""Statistics: pure numbers over plain match summaries, shared by the arena and the report."""
