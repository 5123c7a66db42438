"""Playing one match from plain data: the supervised match loop and its watchdog slot
(`play.py`) and bots behind a process boundary, the seat processes (`seats.py`)."""
