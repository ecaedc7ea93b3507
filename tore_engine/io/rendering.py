"""Page images as JPEG/PNG bytes, drawn in separate processes that the caller can kill.

Both PDF pages (PyMuPDF) and image files (Pillow) are drawn from bytes already read (the app's
`studio.page_images` reads them, confined and from regular files only; a writer that stores PDF
pages as images, `formats.stored_images`), never from a path, so nothing here can open a file it
was not meant to. An untrusted file can make a drawing run for hours or take gigabytes, so no
drawing runs in the caller's process: a few drawing processes (`io.render_worker`) each take one
page at a time, within `TIME_LIMIT` seconds (then the process is killed, and a new one started for
the next page) and `MEMORY_LIMIT` bytes of address space. The caller's thread only waits on a
pipe, without the GIL or a lock, so the app server's other sessions, and `/_stcore/health`, go on
meanwhile. A page that cannot be drawn raises `PageImageError`, which says why: the app shows it
on a placeholder image (`placeholder`), a writer as an input error.
"""

from __future__ import annotations

import io
import json
import math
import os
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from tore_engine.core.layout import MAX_IMAGE_PIXELS
from tore_engine.io.render_worker import FRAME

MAX_SIDE = 1400  # pixels of the longer side: sharp enough to read, small enough to send
MAX_PIXELS = MAX_IMAGE_PIXELS  # of a source image
TIME_LIMIT = 10.0  # seconds a page may take to draw, counted from its request
MEMORY_LIMIT = 2**30  # bytes of address space of a drawing process (about 100 MB of it its libraries)
WORKERS = 2  # drawing processes at most: pages wait for a free one; bounds their memory together
WORKER = Path(__file__).with_name("render_worker.py")
MAX_REPLY = 64 * 2**20  # bytes a drawing process may send back: a JPEG of MAX_SIDE is far smaller
MAX_PNG_REPLY = 4 * MAX_PIXELS  # a PNG of at most MAX_PIXELS: 3 bytes a pixel and its headers
_CHUNK = 2**20


class PageImageError(Exception):
    """The page image cannot be drawn; the message says why, naming the file but not its folder."""


class DrawingBusy(PageImageError):
    """The page was not drawn because of the server's state, not the page's (every drawing process
    busy, none could be started): worth trying again, so never remembered as the page's answer."""


@dataclass(frozen=True)
class RenderedPage:
    """A page drawn as JPEG, with the size of its source (pixels of an image, points of a PDF)."""

    jpeg: bytes
    width: float
    height: float


class _Overran(Exception):
    """The drawing process did not answer in time, ended, or answered out of protocol: it is killed."""


class _Worker:
    """One drawing process and its pipes; a request at a time."""

    def __init__(self, memory: int) -> None:
        self.process = subprocess.Popen([sys.executable, "-P", str(WORKER), str(memory)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None  # both are pipes (PIPE)
        self.stdin, self.stdout = stdin, stdout
        os.set_blocking(self.stdin.fileno(), False)

    def draw(self, header: dict, data: bytes, deadline: float, reply_limit: int) -> tuple[dict, bytes]:
        """The reply to one request, sent and received before `deadline` (a `time.monotonic` value),
        its picture at most `reply_limit` bytes."""
        request = json.dumps(header).encode()
        for frame in (FRAME.pack(len(request)), request, FRAME.pack(len(data)), data):
            self._send(memoryview(frame), deadline)
        try:
            reply = json.loads(self._frame(deadline, limit=2**16))
        except ValueError:
            raise _Overran from None
        if not isinstance(reply, dict):
            raise _Overran
        return reply, self._frame(deadline, limit=reply_limit)

    def _send(self, view: memoryview, deadline: float) -> None:
        while view:
            if not select.select([], [self.stdin], [], _left(deadline))[1]:
                raise _Overran
            try:
                view = view[os.write(self.stdin.fileno(), view[:_CHUNK]):]
            except BrokenPipeError:
                raise _Overran from None

    def _frame(self, deadline: float, limit: int) -> bytes:
        (size,) = FRAME.unpack(self._receive(FRAME.size, deadline))
        if size > limit:
            raise _Overran
        return self._receive(size, deadline)

    def _receive(self, size: int, deadline: float) -> bytes:
        parts, missing = [], size
        while missing:
            if not select.select([self.stdout], [], [], _left(deadline))[0]:
                raise _Overran
            part = os.read(self.stdout.fileno(), min(missing, _CHUNK))
            if not part:  # the process ended
                raise _Overran
            parts.append(part)
            missing -= len(part)
        return b"".join(parts)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.stdin.close()
        self.stdout.close()


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


class RenderPool:
    """Up to `workers` drawing processes, started when first needed and kept for the next pages;
    one that overruns `seconds` is killed (and replaced when next needed)."""

    def __init__(self, workers: int = WORKERS, seconds: float = TIME_LIMIT, memory: int = MEMORY_LIMIT) -> None:
        self.seconds, self.memory = seconds, memory
        self._free = threading.BoundedSemaphore(workers)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()  # guards `_idle` only, never a drawing

    def render(self, data: bytes, name: str, pdf_page: int | None = None, max_side: int = MAX_SIDE) -> RenderedPage:
        """The page in `data` (page `pdf_page` of a PDF, or an image file called `name`) as JPEG;
        raises `PageImageError` when it cannot be drawn, in time or within memory."""
        page = (pdf_page or 0) if pdf_page is not None or name.lower().endswith(".pdf") else None
        reply, jpeg = self._request({"name": name, "page": page, "max_side": max_side}, data, MAX_REPLY)
        return RenderedPage(jpeg, *_source_size(reply, name))

    def pdf_page_png(self, data: bytes, name: str, page: int, dpi: float) -> bytes:
        """Page `page` of the PDF in `data` as PNG at `dpi`, refused when it would have more than
        `MAX_PIXELS`; raises `PageImageError` as `render` does."""
        return self._request({"name": name, "page": page, "dpi": dpi}, data, MAX_PNG_REPLY)[1]

    def _request(self, header: dict, data: bytes, reply_limit: int) -> tuple[dict, bytes]:
        """A drawing process's reply to `header` and `data`, once one is free; its problem raised."""
        header = {**header, "max_pixels": MAX_PIXELS, "seconds": self.seconds}
        if not self._free.acquire(timeout=2 * self.seconds):  # every busy process ends or is killed within `seconds`
            raise DrawingBusy(f"{header['name']} could not be drawn in time: the drawing processes are busy with other pages")
        try:
            reply, picture = self._draw(header, data, reply_limit)
        finally:
            self._free.release()
        if "problem" in reply:
            raise PageImageError(str(reply["problem"])[:500])
        return reply, picture

    def _draw(self, header: dict, data: bytes, reply_limit: int) -> tuple[dict, bytes]:
        deadline = time.monotonic() + self.seconds
        try:
            worker = self._take()
        except OSError:
            raise DrawingBusy(f"{header['name']} could not be drawn: no drawing process could be started") from None
        try:
            reply = worker.draw(header, data, deadline, reply_limit)
        except _Overran:
            worker.kill()
            raise PageImageError(_overran(header["name"], self.seconds, self.memory, time.monotonic() >= deadline)) from None
        except BaseException:  # interrupted mid-request: the process is out of step
            worker.kill()
            raise
        with self._lock:
            self._idle.append(worker)
        return reply

    def _take(self) -> _Worker:
        """An idle drawing process still running, or a new one."""
        while True:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            if worker is None:
                return _Worker(self.memory)
            if worker.process.poll() is None:
                return worker
            worker.kill()  # ended while idle (killed from outside): reaped and closed


def _overran(name: str, seconds: float, memory: int, late: bool) -> str:
    if late:
        return f"{name} could not be drawn in time (within {seconds:g} s)"
    return f"{name} could not be drawn within the drawing process's limits ({seconds:g} s, {memory // 2**20:,} MB of memory)"


def _source_size(reply: dict, name: str) -> tuple[float, float]:
    """The width and height a drawing process reported, if they are sizes at all."""
    sizes = [side for side in (reply.get("width"), reply.get("height")) if isinstance(side, (int, float)) and math.isfinite(side) and side > 0]
    if len(sizes) != 2:
        raise PageImageError(f"{name} could not be drawn: its drawing process answered out of protocol")
    return float(sizes[0]), float(sizes[1])


_POOL = RenderPool()


def render_page(data: bytes, name: str, pdf_page: int | None = None, max_side: int = MAX_SIDE) -> RenderedPage:
    """`RenderPool.render` on the process's one pool of drawing processes."""
    return _POOL.render(data, name, pdf_page, max_side)


def pdf_page_png(data: bytes, name: str, page: int, dpi: float) -> bytes:
    """`RenderPool.pdf_page_png` on the process's one pool of drawing processes."""
    return _POOL.pdf_page_png(data, name, page, dpi)


def placeholder(width: float, height: float, message: str) -> bytes:
    """A light grey PNG of the page's proportions with `message` written on it."""
    scale = 600 / max(width, height)
    size = (max(1, int(width * scale)), max(1, int(height * scale)))
    picture = Image.new("RGB", size, "#f0f0f0")
    ImageDraw.Draw(picture).multiline_text((12, 12), _wrap(message, 60), fill="#555555")
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def _wrap(text: str, width: int) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])
