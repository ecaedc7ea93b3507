"""The drawing process: page images drawn from bytes, away from the app server or the writer that
asked (`io.rendering` starts it, sends it the files, and kills it when a drawing overruns its time).

An untrusted PDF or image can make a drawing library run for hours (form XObjects that draw each
other 4^24 times) or take a gigabyte (a 120-million-pixel PNG decodes into 360 MB). Here that costs
only this process: it limits its own address space (RLIMIT_AS) once its libraries are loaded, and
its CPU time before each drawing (RLIMIT_CPU: a process left behind by a killed server ends by
itself). It runs as a script (`python -P render_worker.py MEMORY_BYTES`), so it imports only the
standard library, Pillow and PyMuPDF, never the server's modules; the server imports it only for
its framing, without PyMuPDF.

Protocol, on stdin and stdout: a message is frames, each an 8-byte big-endian length and that many
bytes. A request is a JSON header {"name", "page" (a PDF page index, or null for an image file),
"max_side" or "dpi", "max_pixels", "seconds"} and the file's bytes; the reply a JSON header
{"width", "height"} (the source's size) or {"problem": the placeholder's text}, and the picture
(empty with a problem): a JPEG at most `max_side` pixels a side, or with `dpi` (a PDF page for a
writer that stores it) a PNG at that resolution. File descriptor 1 is pointed at stderr, so that
MuPDF's messages cannot garble a reply.
"""

from __future__ import annotations

import io
import json
import os
import resource
import struct
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from PIL import Image

FRAME = struct.Struct(">Q")
RESIZED_AS_IS = ("L", "RGB")  # other modes are converted first: palettes and bits resample badly, alpha is dropped anyway


class Refused(Exception):
    """The page cannot be drawn; the message is the placeholder's text."""


def read_frame(stream: BinaryIO) -> bytes | None:
    """One frame's bytes; None at the end of the stream (the server closed it or ended)."""
    head = stream.read(FRAME.size)
    if len(head) < FRAME.size:
        return None
    (size,) = FRAME.unpack(head)
    body = stream.read(size)
    return body if len(body) == size else None


def write_frames(stream: BinaryIO, *frames: bytes) -> None:
    """The frames of one message, flushed."""
    for frame in frames:
        stream.write(FRAME.pack(len(frame)))
        stream.write(frame)
    stream.flush()


@contextmanager
def _pdf_page_of(data: bytes, name: str, page_no: int) -> Iterator[Any]:
    """Page `page_no` of the PDF in `data`; whatever MuPDF raises while it is used says the file
    is not a readable PDF, or (a failed allocation) is a `MemoryError`."""
    import pymupdf  # here, not above: the server imports this module for its protocol

    try:
        with pymupdf.open(stream=data, filetype="pdf") as document:
            if not 0 <= page_no < document.page_count:
                raise Refused(f"{name} has {document.page_count} pages, no page {page_no + 1}")
            yield document[page_no]
    except (Refused, MemoryError):
        raise
    except pymupdf.mupdf.FzErrorSystem:  # how MuPDF reports a failed allocation
        raise MemoryError from None
    except Exception:  # PyMuPDF raises its own types for damaged files
        raise Refused(f"{name} is not a readable PDF") from None


def _pdf_page(data: bytes, name: str, page_no: int, max_side: int) -> tuple[Image.Image, float, float]:
    import pymupdf

    with _pdf_page_of(data, name, page_no) as page:
        zoom = max_side / max(page.rect.width, page.rect.height)
        pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        return Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples), page.rect.width, page.rect.height


def _pdf_png(data: bytes, name: str, page_no: int, dpi: float, max_pixels: int) -> tuple[bytes, float, float]:
    """The page as PNG at `dpi`, refused before drawing when it would have more than `max_pixels`
    (its size is the file's word)."""
    with _pdf_page_of(data, name, page_no) as page:
        width, height = (round(side * dpi / 72) for side in (page.rect.width, page.rect.height))
        if width * height > max_pixels:
            raise Refused(f"page {page_no + 1} of {name} would be {width:,} x {height:,} pixels at {dpi:g} dpi, more than the "
                          f"{max_pixels:,} a page image may have")
        return page.get_pixmap(dpi=dpi).tobytes("png"), page.rect.width, page.rect.height


def _picture(data: bytes, name: str, max_side: int, max_pixels: int) -> tuple[Image.Image, float, float]:
    """The image shrunk as early as it can be: a JPEG decoded at a fraction of its size (draft), a
    grey or RGB image reduced in its own mode, so that its full size is held once; other modes
    (palettes, bits, alpha) are converted first, since they resample badly."""
    try:
        with Image.open(io.BytesIO(data)) as opened:
            width, height = opened.size
            if width * height > max_pixels:
                raise Refused(f"{name} has {width} x {height} pixels, more than the {max_pixels:,} drawn")
            opened.draft(None, (2 * max_side, 2 * max_side))
            picture = opened if opened.mode in RESIZED_AS_IS else opened.convert("L" if opened.mode == "1" else "RGB")
            picture.thumbnail((max_side, max_side))
            return picture.convert("RGB"), float(width), float(height)
    except (Refused, MemoryError):
        raise
    except Exception:  # Pillow raises several types for unreadable images
        raise Refused(f"{name} is not a readable image") from None


def _limit_cpu(seconds: float) -> None:
    """At most `seconds` (and a second or two) of CPU time from now, then SIGXCPU ends this
    process: the server kills it sooner, unless the server itself was killed."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime + seconds) + 2
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _jpeg(request: dict, data: bytes, name: str) -> tuple[bytes, float, float]:
    """The image file, or the PDF page, as JPEG at most `max_side` pixels a side."""
    if request["page"] is None:
        picture, width, height = _picture(data, name, request["max_side"], request["max_pixels"])
    else:
        picture, width, height = _pdf_page(data, name, request["page"], request["max_side"])
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=85)
    return buffer.getvalue(), width, height


def draw(request: dict, data: bytes, memory: int) -> tuple[dict, bytes]:
    """The reply to one request: the picture and its source's size, or the problem."""
    name = str(request["name"])
    try:
        if request.get("dpi") is not None:
            encoded, width, height = _pdf_png(data, name, request["page"], request["dpi"], request["max_pixels"])
        else:
            encoded, width, height = _jpeg(request, data, name)
    except Refused as problem:
        return {"problem": str(problem)}, b""
    except MemoryError:
        return {"problem": f"{name} could not be drawn within memory ({memory // 2**20:,} MB)"}, b""
    return {"width": width, "height": height}, encoded


def main() -> None:
    import pymupdf  # noqa: F401 (loaded before the memory limit is set)

    memory = int(sys.argv[1])
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    Image.MAX_IMAGE_PIXELS = None  # each request's max_pixels is checked instead, with a clearer message
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    while (header := read_frame(requests)) is not None and (data := read_frame(requests)) is not None:
        request = json.loads(header)
        _limit_cpu(request["seconds"])
        reply, picture = draw(request, data, memory)
        del data
        write_frames(replies, json.dumps(reply).encode(), picture)


if __name__ == "__main__":
    main()
