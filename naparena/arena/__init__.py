"""Tournaments: the tournament file, the schedule, match play, workers, runs and verification."""
