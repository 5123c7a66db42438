"""The tournament file and its settings: what a run is, before anything runs.

`settings.py` (every key, default and rule), `tournament.py` (the validated data),
`reader.py` (file in, `Tournament` out), `starter.py` (`naparena init`'s file),
`seating.py` and `schedule.py` (who meets where on which deals, every seed). Plain data
and pure functions: nothing here starts a process, forks, or handles a signal.
"""
