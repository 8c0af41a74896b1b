"""allreduce.py - mpi4py check for kt's cluster tests: allreduce(rank + 1) over all ranks must be
n(n+1)/2. Every rank prints `rank R/N host H`, rank 0 prints `allreduce sum S expected E ok`;
exits 1 on a mismatch.
"""

import socket
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
print(f"rank {rank}/{size} host {socket.gethostname()}", flush=True)
total = comm.allreduce(rank + 1, op=MPI.SUM)
expected = size * (size + 1) // 2
if rank == 0:
    print(f"allreduce sum {total} expected {expected} {'ok' if total == expected else 'MISMATCH'}",
          flush=True)
sys.exit(0 if total == expected else 1)
