"""Issue 42 C2 on a live server: the 2,047-class one-page pair on the Matrices page and a page of a
million boxes on Overlays, opened by link in Debian's Chromium, while a second thread asks the
server's `/_stcore/health` every 0.2 s and reads the PSS of its process tree.

Targets: the server's PSS under 1.5 GB, every health answer within 1 s, the largest websocket
message far below Streamlit's 200 MB limit, and the app's own note (or message) on screen, never
Streamlit's exception box.

    .venv/bin/python -m benchmarks.bench_hostile_app [--out result.json]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np

from benchmarks.bench_app import CHROMIUM, CHROMIUM_ARGS, _idle
from benchmarks.common import machine_line, served_tore_app, tree_pss

MB = 2**20
CLASSES = 2047
MILLION = 1_000_000
EXCEPTION_BOX = "[data-testid=stException]"


def many_classes(folder: Path) -> None:
    """One 1024 x 1024 page, 2,047 classes of one 18 x 18 box each; the prediction shifted by 2 px."""
    names = [f"class_{k}" for k in range(CLASSES)]

    def side(name: str, shift: int) -> dict:
        boxes = [{"label": names[k], "bbox": [(k % 46) * 22 + shift, (k // 46) * 22 + shift, (k % 46) * 22 + 18 + shift, (k // 46) * 22 + 18 + shift]}
                 for k in range(CLASSES)]
        return {"name": name, "taxonomy": names, "pages": [{"id": "p0", "width": 1024, "height": 1024, "boxes": boxes}]}

    folder.mkdir(parents=True)
    for file, (name, shift) in (("gt.json", ("gt", 0)), ("pred.json", ("model", 2))):
        (folder / file).write_text(json.dumps(side(name, shift)))


def million_boxes(folder: Path) -> None:
    """One 1000 x 1000 page: 20 reference boxes, a prediction of a million 1 x 1 boxes."""
    rng = np.random.default_rng(42)
    labels = ["text", "title", "table", "picture"]
    reference = [{"label": labels[k % 4], "bbox": [50 * (k % 5) * 4, 50 * (k // 5) * 4, 50 * (k % 5) * 4 + 150, 50 * (k // 5) * 4 + 150]} for k in range(20)]
    xs, ys = rng.integers(0, 999, MILLION), rng.integers(0, 999, MILLION)
    classes, scores = rng.integers(0, 4, MILLION), rng.random(MILLION)
    folder.mkdir(parents=True)
    (folder / "gt.json").write_text(json.dumps({"name": "gt", "pages": [{"id": "p0", "width": 1000, "height": 1000, "boxes": reference}]}))
    with (folder / "pred.json").open("w") as out:
        out.write('{"name": "model", "pages": [{"id": "p0", "width": 1000, "height": 1000, "boxes": [')
        out.write(",".join(f'{{"label":"{labels[c]}","bbox":[{x},{y},{x + 1},{y + 1}],"score":{s:.4f}}}'
                           for x, y, c, s in zip(xs.tolist(), ys.tolist(), classes.tolist(), scores.tolist())))
        out.write("]}]}")


class Watch(threading.Thread):
    """Health latency and the server tree's PSS, every 0.2 s until stopped."""

    def __init__(self, url: str, pid: int) -> None:
        super().__init__(daemon=True)
        self.url, self.pid, self.stopped = url, pid, threading.Event()
        self.health: list[float] = []
        self.slow: list[tuple[float, float]] = []  # (seconds since the watch began, latency) of answers over 0.5 s
        self.pss: list[int] = []
        self.began = time.monotonic()

    def run(self) -> None:
        while not self.stopped.is_set():
            start = time.monotonic()
            try:
                urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=30).read()
                self.health.append(time.monotonic() - start)
                if self.health[-1] > 0.5:
                    self.slow.append((round(start - self.began, 1), round(self.health[-1], 2)))
            except OSError:
                self.health.append(float("inf"))
            self.pss.append(tree_pss(self.pid))
            self.stopped.wait(0.2)


def _visit(browser, url: str, path: str, query: dict[str, str], frames: list[int]) -> dict:
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    largest: list[bytes] = [b""]

    def received(frame: bytes | str) -> None:
        data = frame if isinstance(frame, bytes) else frame.encode()
        frames.append(len(data))
        largest[0] = max(largest[0], data, key=len)

    page.on("websocket", lambda socket: socket.on("framereceived", received))
    start = time.monotonic()
    page.goto(f"{url}/{path}?{urllib.parse.urlencode(query)}")
    page.wait_for_timeout(1000)
    _idle(page, timeout=600_000)
    seconds = time.monotonic() - start
    text = page.inner_text("body")
    found = {"seconds": round(seconds, 1), "exception_box": page.locator(EXCEPTION_BOX).count(),
             "message_size_error": "MessageSizeError" in text, "largest_frame_mb": round(max(frames, default=0) / MB, 2),
             "largest_frame_words": sorted({word.decode() for word in re.findall(rb"[A-Za-z_]{6,40}", largest[0])})[:60],
             "notes": [line for line in text.splitlines() if any(word in line for word in ("largest", "of the", "drawn", "classes"))][:6]}
    page.close()
    return found


def measure() -> dict:
    from playwright.sync_api import sync_playwright

    result: dict = {"machine": machine_line()}
    with tempfile.TemporaryDirectory(prefix="bench_hostile_app_") as root:
        many_classes(Path(root) / "classes")
        million_boxes(Path(root) / "million")
        result["million_prediction_mb"] = round((Path(root) / "million" / "pred.json").stat().st_size / MB, 1)
        with served_tore_app(Path(root)) as (url, server), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            watch = Watch(url, server.pid)
            watch.start()
            result["idle_pss_mb"] = round(tree_pss(server.pid) / MB)
            for name, path, folder, extra in (("matrices_2047_classes", "", "classes", {}), ("overlays_million_boxes", "overlays", "million", {"page": "p0"})):
                frames: list[int] = []
                result[f"{name}_began_s"] = round(time.monotonic() - watch.began, 1)
                result[name] = _visit(browser, url, path, {"src": "path", "ref": f"{folder}/gt.json", "a": f"{folder}/pred.json", **extra}, frames)
            watch.stopped.set()
            watch.join()
            browser.close()
        result["peak_pss_mb"] = round(max(watch.pss) / MB)
        result["slowest_health_s"] = round(max(watch.health), 3)
        result["health_probes"] = len(watch.health)
        result["slow_health"] = watch.slow
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    result = measure()
    text = json.dumps(result, indent=1)
    print(text)
    if parser.parse_args().out:
        parser.parse_args().out.write_text(text)


if __name__ == "__main__":
    main()
