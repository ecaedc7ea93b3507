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


SAVED_PROBE = """
import json, sys, threading, time
from pathlib import Path
from tore_engine.studio import background, evaluations, warm_up
from tore_engine.formats import page_parser
from tore_engine.io import json_compiled
from streamlit import delta_generator
done = []
evaluations.open_saved_first = lambda folder: done.append("opened " + folder.name)
page_parser.warm = lambda: done.append("page parser")
json_compiled.warm = lambda: done.append("json scan")
background.DRAWN_AFTER, warm_up.KERNELS_AFTER_FIRST_PAGE = 0.2, 0.2
warm_up.start(Path("runs") / "a")
deadline = time.monotonic() + 120
while not done and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(1.0)
before_first_page = list(done)
background.start_queued()  # the end of the server's first run
time.sleep(0.1)
soon_after = list(done)
[thread] = [thread for thread in threading.enumerate() if thread.name == "tore-warm-up"]
thread.join(60)
print(json.dumps({"before": before_first_page, "soon_after": soon_after, "after": done,
                  "checked": delta_generator._use_warning_has_been_displayed}))
"""


def test_with_a_saved_folder_the_kernels_wait_until_its_first_page_is_drawn():
    """`tore app FOLDER`: the folder opened at once, the kernels (which its views do not need) only
    after the first run's page was drawn and a few seconds more, not while that page is sent."""
    result = subprocess.run([sys.executable, "-c", SAVED_PROBE], capture_output=True, text=True, cwd=REPOSITORY, timeout=180, check=True)
    shown = json.loads(result.stdout.strip().splitlines()[-1])
    assert shown["before"] == ["opened a"]  # 1 s after the opening: no kernel yet, no first page
    assert shown["soon_after"] == ["opened a"]  # the page is drawn DRAWN_AFTER after its run ended
    assert shown["after"] == ["opened a", "page parser", "json scan"]
    assert shown["checked"] is True  # Streamlit's once-a-process stack walk done by the warm-up, not the first run
    assert "Warning" not in result.stderr and "Traceback" not in result.stderr
