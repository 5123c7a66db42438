"""Nap for learners: PettingZoo, Gymnasium and OpenSpiel faces of the engine, and trained
policies as bots. Needs the `envs` extra (the OpenSpiel game: the `openspiel` extra); nothing
else in naparena imports this package."""
