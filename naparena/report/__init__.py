"""Presentation of results: tables built from plain result data."""
