"""Warm, isolated kernels: notebook records at the cost of the work they record.

A fresh kernel per record pays for a Python process, ipykernel, pandas, matplotlib and
evalkit every time. Here a *template* process (:mod:`.template`; one per local batch,
shared by its workers, or one per Dask worker or ``evalkit record`` process) imports all
that once and, for each record, forks a child that becomes a fresh ipykernel with its own
connection file, ports and HMAC key, runs that one record and is killed. Each record so
starts from the same state, the template's, which has run no record: nothing a record
sets (a global, a module attribute, an environment variable, the working directory) can
reach another. :mod:`.pool` is a process's side (starting, reaching, replacing and stopping
the template, following its kernels); :mod:`.provisioner` plugs it into jupyter_client, so
papermill and nbclient run the notebook exactly as on the fresh path (:mod:`.engine` only
saves it less often); :mod:`.workers` runs a local batch's worker processes around them.
"""

from .pool import FRESH, REUSED, WARM, KernelPool, close_worker_pool, worker_pool

__all__ = ["FRESH", "REUSED", "WARM", "KernelPool", "close_worker_pool", "worker_pool"]
