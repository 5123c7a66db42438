"""Tournaments, in one-way layers: `setup` (the file, its settings, the schedule) →
`records` (match logs, the run directory, booking, verify) → `match` (playing one match)
→ `executors` (pool, cluster) → `session.py` (a run: open, play, resume). Each imports
only those before it."""
