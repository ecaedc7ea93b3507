"""Where evaluations run: local worker processes, or a Dask scheduler listed in the server's
configuration.

A scheduler receives the pages and sends back pickled results that the server unpickles, so its
address is as trusted as the server's own code: it comes only from the configuration
(`$TORE_STUDIO_DASK_SCHEDULERS="name=tcp://host:8786,..."` and the `[dask_schedulers]` table of
Streamlit's secrets). The sidebar and the URL choose a scheduler by its name among those; nothing a
user types ever becomes a network address.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from concurrent.futures import Executor

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.run.cluster import dask_client, watched_executor
from tore_engine.studio import sections, state

SCHEDULERS_VARIABLE = "TORE_STUDIO_DASK_SCHEDULERS"
SCHEDULERS_SECRET = "dask_schedulers"
LOCAL = ""  # the choice "no scheduler": local processes
COMPUTE_OPEN = state.SECTION("compute")  # the sidebar's Compute section (session state and URL)
DEFAULT_MAX_WORKERS = 8  # as the command line's --workers
_log = logging.getLogger(__name__)


def _from_environment() -> dict[str, str]:
    """`name=address` pairs separated by commas; a malformed entry is skipped (and logged)."""
    schedulers = {}
    for entry in filter(None, (part.strip() for part in os.environ.get(SCHEDULERS_VARIABLE, "").split(","))):
        name, separator, address = (text.strip() for text in entry.partition("="))
        if not (separator and name and address):
            _log.warning("%s: entry %r is not name=address; skipped", SCHEDULERS_VARIABLE, entry)
            continue
        schedulers[name] = address
    return schedulers


def _from_secrets() -> dict[str, str]:
    """The `[dask_schedulers]` table of `name = "address"` lines; anything else is skipped (and logged)."""
    if not st.secrets.load_if_toml_exists():
        return {}
    table = st.secrets.get(SCHEDULERS_SECRET, {})
    if not isinstance(table, Mapping):
        _log.warning("secrets: %s must be a table of name = \"address\"; skipped", SCHEDULERS_SECRET)
        return {}
    return {str(name): str(address) for name, address in table.items()}


def configured_schedulers() -> dict[str, str]:
    """Scheduler name -> address, from the environment, then the secrets (which win on a name)."""
    return {**_from_environment(), **_from_secrets()}


def default_workers() -> int:
    """As many local worker processes as `tore evaluate` uses by default: the cores, at most 8."""
    return min(os.cpu_count() or 1, DEFAULT_MAX_WORKERS)


def compute_choices() -> tuple[int, str | None]:
    """Local worker processes, and the name of a configured Dask scheduler (or None); the numbers
    are the same either way."""
    cpus = os.cpu_count() or 1
    schedulers = configured_schedulers()
    state.seed(state.WORKERS, default_workers(), range(1, cpus + 1))
    state.seed(state.SCHEDULER, LOCAL, [LOCAL, *schedulers])
    scheduler = st.session_state[state.SCHEDULER]
    label = f"Compute: Dask scheduler {scheduler}" if scheduler else f"Compute: {st.session_state[state.WORKERS]} local worker processes"
    section = sections.opened(label, COMPUTE_OPEN, where=st.sidebar)
    if section is not None:
        with section:
            st.number_input("Local worker processes", 1, cpus, key=state.WORKERS, persist_state="session",
                            help="pages are evaluated in batches over this many processes")
            if schedulers:
                st.selectbox("Dask scheduler", [LOCAL, *schedulers], key=state.SCHEDULER, persist_state="session",
                             format_func=lambda name: name or "none: local processes",
                             help="a cluster listed in the server's configuration; the numbers are the same")
            else:
                st.caption(f"No Dask scheduler is configured on this server (the operator lists them in `{SCHEDULERS_VARIABLE}`).")
    return int(st.session_state[state.WORKERS]), scheduler or None


@st.cache_resource(show_spinner=False)
def _client_executor(address: str) -> Executor:
    """One client a scheduler address for the server's lifetime (connected within the cluster
    module's time limit; a failure is not cached, the next evaluation tries again), as an executor
    whose tasks fail clearly when the cluster stays without workers."""
    client = dask_client(address)
    return watched_executor(client, address)


def dask_executor(name: str) -> Executor:
    """The executor of the configured scheduler `name`. An `InputError` when it is not configured
    (any more) or cannot be reached; the message names the scheduler, not its address (the
    server's log has the details)."""
    address = configured_schedulers().get(name)
    if address is None:
        raise InputError(f"the Dask scheduler {name!r} is not in this server's configuration")
    try:
        return _client_executor(address)
    except InputError as error:
        _log.warning("Dask scheduler %r: %s", name, error.paragraph())
        raise InputError(f"the Dask scheduler {name!r} cannot be reached (the server's log says why); "
                         "choose local processes under Compute") from None
