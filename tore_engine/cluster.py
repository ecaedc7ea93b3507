"""Connecting to a Dask cluster, for datasets that outgrow one machine.

The engine only needs a `concurrent.futures.Executor`; a Dask client's `get_executor()` is one, so
pages go to the cluster in the same batches as to local processes, with the same result.
"""

from __future__ import annotations

from typing import Any

from tore_engine.errors import InputError


def dask_client(address: str) -> Any:
    """A `distributed.Client` connected to the scheduler at `address`; an `InputError` when Dask is
    missing or the scheduler cannot be reached."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("a Dask scheduler needs Dask: pip install 'tore-studio[dask]'") from None
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as error:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {error}") from None
