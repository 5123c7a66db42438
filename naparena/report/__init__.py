"""Presentation of results: Rich tables for the terminal (`tables.py`, sized by `fit.py`) and
one self-contained HTML page (`html.py`), built from plain result data."""
