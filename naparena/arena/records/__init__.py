"""What a run leaves on disk, and reading it back: the match-log format (`logs.py`), the
run directory and its manifest (`rundir.py`), booking results in schedule order
(`ledger.py`), and replaying a run's logs to verify them (`verify.py`). Below the match
layer: it reads and writes files, it never plays.
"""
