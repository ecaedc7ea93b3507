"""Where the page images named inside a layout file are found, and how a writer names them.

A name inside a file is untrusted: it is looked up relative to the file (or to a page-images
folder the user chose), and a name that would leave that folder, through `..`, an absolute path
or a symbolic link, gives no image and a warning, never a file outside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import PageImage
from tore_engine.io.paths import confine


@dataclass(frozen=True)
class ImageFolder:
    """Names are taken relative to `base` (the layout file's folder, or the folder the user chose
    for page images) and must stay inside it."""

    base: Path

    @classmethod
    def beside(cls, layout_file: Path, chosen: Path | None = None) -> "ImageFolder":
        return cls(Path(chosen) if chosen is not None else Path(layout_file).parent)

    def locate(self, name: str, page_id: str, side: str, warnings: list[InputWarning], pdf_page: int | None = None) -> PageImage | None:
        """The image `name` names, or None (with a warning) when it would leave the folder."""
        try:
            path = confine(name, self.base, what="page image")
        except InputError:
            warnings.append(InputWarning(page_id, None, side, "the page image it names is outside the layout's folder; not drawn"))
            return None
        return PageImage(path, pdf_page)


def image_name(image: PageImage, folder: Path) -> str | None:
    """How a layout file written into `folder` names a page image: relative to the folder when the
    image lies inside it (the file and its images move together), else its absolute path (read
    back with `--page-images` set to a folder that holds it); None for a stored image."""
    if image.parquet_cell is not None:
        return None
    path = Path(image.path)
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)
