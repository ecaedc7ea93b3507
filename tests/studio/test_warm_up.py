"""The server's warm-up (tore_engine.studio.warm_up): started once a process, it imports what the
first session would otherwise wait for, in a fresh interpreter as a new server is."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import REPOSITORY

PROBE = """
import json, sys, threading
from tore_engine.studio import warm_up
before = {name for name in ("pandas", "plotly.graph_objects", "tore_engine.studio.panels") if name in sys.modules}
warm_up.start()
warm_up.start()
threads = [thread for thread in threading.enumerate() if thread.name == "tore-warm-up"]
for thread in threads:
    thread.join(120)
print(json.dumps({"before": sorted(before), "threads": len(threads), "alive": any(t.is_alive() for t in threads),
                  "after": [name for name in ("pandas", "plotly.graph_objects", "tore_engine.studio.panels", "tore_engine.studio.overlay_panels",
                                               "tore_engine.formats.page_parser") if name in sys.modules]}))
"""


def test_the_warm_up_starts_once_and_imports_what_the_first_run_needs():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPOSITORY, timeout=180, check=True)
    shown = json.loads(result.stdout.strip().splitlines()[-1])
    assert shown["before"] == []  # importing warm_up itself loads none of them
    assert shown["threads"] == 1 and not shown["alive"]
    assert shown["after"] == ["pandas", "plotly.graph_objects", "tore_engine.studio.panels", "tore_engine.studio.overlay_panels",
                              "tore_engine.formats.page_parser"]
    assert "Traceback" not in result.stderr
