"""Where matches run: this machine's fork pool and the in-process executor (`pool.py`), a
Dask cluster (`cluster.py`), and the worker processes' log records (`worker_logs.py`)."""
