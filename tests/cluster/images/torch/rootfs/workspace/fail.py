"""fail.py - fails on purpose, for kt's failure tests: raises an exception, prints its
traceback and `fail.py: ... exit code 3`, and exits 3.

With FAIL_RANK set (e.g. under torchrun), only that rank fails; the others exit 0.
"""

import os
import sys
import traceback

rank = os.environ.get("RANK", "0")
if os.environ.get("FAIL_RANK", rank) != rank:
    print(f"fail.py: rank {rank} exits 0 (FAIL_RANK={os.environ['FAIL_RANK']})", flush=True)
    sys.exit(0)
try:
    raise RuntimeError(f"kt failure test: rank {rank} fails on purpose")
except RuntimeError:
    traceback.print_exc()
    print(f"fail.py: rank {rank} failed on purpose, exit code 3", file=sys.stderr, flush=True)
    sys.exit(3)
