"""A seat program (no naparena import) that tries to fill the process table: it forks
children that sleep until it has `N` or a fork fails, says on stderr how many it got,
then runs the command after `--` as the seat. Usage: forker.py N -- COMMAND..."""

import os
import sys
import time

wanted = int(sys.argv[1])
command = sys.argv[sys.argv.index("--") + 1:]
got = 0
for _ in range(wanted):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    got += 1
sys.stderr.write(f"forked {got} of {wanted}\n")
sys.stderr.flush()
os.execv(command[0], command)
