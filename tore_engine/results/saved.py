"""A saved evaluation: what `tore evaluate --out DIR` leaves beside report.json so that
`tore.open(DIR)` gives the `Evaluation` back without its inputs (docs/cli.md#saved-evaluations).

An evaluation is saved as its exact state, never as a Python object: everything else (the matrices,
report.json, pages.csv, mAP's summary) is made from that state by the same code as after an
evaluation, so a reopened evaluation gives the same bits. Three files, named in `SAVED_FILES`:

- `saved-arrays.npz`: the state's arrays, one uncompressed `.npy` member each, named `<part>.<field>`
  and read with `allow_pickle=False` (NumPy refuses an object array instead of unpickling it);
- `saved-text.json`: the state's text (taxonomy, page ids, warnings), decoded by msgspec against
  `SavedText`, unknown fields refused;
- `saved.json`, the manifest: the format's name and version, the product's version, the date, the
  run's options, a summary for a list of runs, the named parts the state holds (`PARTS`), and the
  size and SHA-256 of each other file. It is written last, so a folder without it holds no saved
  evaluation.

A saved folder is untrusted input like any other: every file is read bounded, checked against the
manifest's size and digest, parsed by a schema, and its arrays checked for type, shape and range
before anything indexes with them; any problem is an `InputError` naming the file. A folder from
another version of the format says which version it is and which this one reads.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import os
import struct
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import msgspec
import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.offsets import offsets_of
from tore_engine.core.packed_warnings import PackedWarnings, warning_rows
from tore_engine.core.taxonomy import Taxonomy
from tore_engine.io.files import read_bytes
from tore_engine.metrics.algorithm1 import ExactCounts
from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS
from tore_engine.metrics.map_report import MapReport, MapState
from tore_engine.metrics.map_types import CLASS_TYPE, CONVENTIONS, MAX_DETECTIONS, RANK_TYPE, PageMatches
from tore_engine.metrics.matrices import ToreMatrices
from tore_engine.metrics.mean_average_precision import PageStatistics
from tore_engine.metrics.rates import f1_score
from tore_engine.metrics.sweep import POINTS, SweepState
from tore_engine.results.evaluation import Evaluation

FORMAT = "tore-saved-evaluation"
VERSION = 1  # the layout this module writes and reads; any change to a file's schema raises it
MANIFEST = "saved.json"
ARRAYS = "saved-arrays.npz"
TEXT = "saved-text.json"
SAVED_FILES = (ARRAYS, TEXT, MANIFEST)  # in the order they are moved into place: the manifest last
# The named parts a state may hold; `tore` always. `map` is mAP's summary (at 100,000 pages its
# records take 160 MB, its summary 2 MB); `map_records` the records too, kept with `sweep` only,
# whose detection view reads them; `boxes` TIDE's summary (docs/cli.md#box-outcomes-and-tides-error-types, report.json's
# `errors`) and each page's box counts, not its decisions box by box, which a merge would need. A later version adds parts; a folder
# naming a part this version does not know is refused, naming it.
PARTS = ("tore", "map", "map_records", "sweep", "boxes")
MAX_MANIFEST_BYTES = 16 * 2**20
ALIGNMENT = 64  # bytes: where each array's data start in saved-arrays.npz (older folders: anywhere, copied when read)
PADDING_ID, PADDING_FIELD = 0xD935, struct.Struct("<HH")  # the zip extra field that pads a member's local header
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # a zip member's local header: signature, ..., name and extra field lengths
ZIP64_EXTRA = 20  # bytes of the zip64 extra field `zipfile` adds to a local header written with force_zip64
MAX_NPY_HEADER = 10_000  # bytes of a .npy header (NumPy's own limit)


class SavedFile(msgspec.Struct, forbid_unknown_fields=True):
    bytes: int
    sha256: str


class RunInfo(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=False):
    """How the evaluation was made, as given (paths as typed, made absolute): for a list of runs,
    and to find the inputs again for drawing pages. Every field may be unknown (None)."""

    name: str | None = None  # the run's own name (`--run-name`)
    reference: str | None = None
    prediction: str | None = None
    reference_name: str | None = None
    prediction_name: str | None = None
    format: str | None = None
    images: str | None = None
    page_images: str | None = None
    taxonomy: str | None = None
    label_map: str | None = None
    min_score: float | None = None
    map: str | None = None
    sweep: bool | None = None
    min_score_side: str | None = None  # whose boxes the minimum score dropped: both (None too) or prediction
    page_id_map: list[str] | None = None  # the rules and table files that mapped the prediction's page ids


class Summary(msgspec.Struct, forbid_unknown_fields=True):
    """The headline figures, as report.json has them, for a list of runs that need not open each state."""

    mode: str
    pages: int
    classes: list[str]
    foreground: dict[str, float]  # recall, precision, f1
    map: dict[str, float | None] | None  # map, map_50, map_75
    per_class_f1: dict[str, float | None] | None  # single taxonomy only; None: the class on neither side


class Manifest(msgspec.Struct, forbid_unknown_fields=True):
    format: str
    version: int
    product_version: str
    created: str  # ISO 8601, UTC
    parts: list[str]
    files: dict[str, SavedFile]
    run: RunInfo
    summary: Summary


class _Version(msgspec.Struct):
    """The manifest's first two fields, read before the rest: another version's manifest may have others."""

    format: str
    version: int
    product_version: str = "unknown"


class TaxonomyText(msgspec.Struct, forbid_unknown_fields=True):
    mode: Literal["single", "dual"]
    classes: list[str]
    reference_index: dict[str, int]
    prediction_index: dict[str, int]
    prediction_vocabulary: str | None


class WarningText(msgspec.Struct, array_like=True):
    page: str | None
    box: int | None
    side: str | None
    message: str


class MapText(msgspec.Struct, forbid_unknown_fields=True):
    convention: str
    predicted: int
    unscored: int


Number = float | int  # as the report has it: 3 stays 3, 3.0 stays 3.0 (report.json's bytes)


class PageStatisticsText(msgspec.Struct, forbid_unknown_fields=True):
    total: int
    mean: Number | None
    median: Number | None
    std: Number
    bins: list[Number]
    hist: list[Number]


class MapReportText(msgspec.Struct, forbid_unknown_fields=True):
    """mAP's summary (`MapReport`) but its per-page values, which are the array `map.pages`."""

    convention: str
    figures: dict[str, Number | None]
    per_class: dict[str, tuple[Number | None, Number | None]]
    page_stats: dict[str, PageStatisticsText]
    predicted: int
    unscored: int


class ErrorsText(msgspec.Struct, forbid_unknown_fields=True):
    """report.json's `errors` (docs/cli.md#box-outcomes-and-tides-error-types)."""

    reference: str
    iou: Number
    background_iou: Number
    ap50: Number
    dap: dict[str, Number]
    dap_special: dict[str, Number]
    counts: dict[str, int]
    per_class: dict[str, dict[str, int]]


class SavedText(msgspec.Struct, forbid_unknown_fields=True):
    taxonomy: TaxonomyText
    page_ids: list[str]
    warnings: list[WarningText]
    warning_groups: list[int]
    map_reason: str | None
    map_report: MapReportText | None
    map: MapText | None  # mAP's records, kept only with the sweep (its detection view reads them)
    sweep_detection: MapText | None
    python_integers: list[str]  # arrays stored as int64 that the evaluation holds as Python integers
    decimal_integers: list[str]  # arrays of Python integers too large for int64, stored as decimal text
    errors_reason: str | None = None  # why there are no error figures (dual taxonomy, nothing to match)
    errors: ErrorsText | None = None  # TIDE's figures as report.json has them (part `boxes`)


@dataclass(frozen=True)
class SavedEvaluation:
    """A saved folder's manifest: what a list of runs shows without opening the state."""

    folder: Path
    manifest: Manifest


# --- writing ---------------------------------------------------------------------------------------


class _Arrays:
    """The arrays of a state being saved, with the note of which hold Python integers."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray | Callable[[], np.ndarray]] = {}  # a function: made as it is written, let go of after
        self.python: list[str] = []
        self.decimal: list[str] = []

    def add(self, name: str, array: np.ndarray) -> None:
        if array.dtype == object:  # Python integers (exact sums that could overflow int64)
            try:
                self.arrays[name] = np.array(array.tolist(), dtype=np.int64).reshape(array.shape)
                self.python.append(name)
            except OverflowError:
                self.arrays[name] = np.array([str(int(value)) for value in array.ravel().tolist()]).reshape(array.shape)
                self.decimal.append(name)
        else:
            self.arrays[name] = np.ascontiguousarray(array)

    def add_later(self, name: str, make: Callable[[], np.ndarray]) -> None:
        """An array made only as it is written, and let go of after: a column the evaluation holds
        in another form (pages as offsets, match bits as rows of a table), written as it always was."""
        self.arrays[name] = make

    def add_counts(self, prefix: str, counts: ExactCounts) -> None:
        for field in ("denominator", "row", "column", "numerator"):
            self.add(f"{prefix}.{field}", getattr(counts, field))

    def add_matches(self, prefix: str, matches: PageMatches) -> None:
        """The records as saved since they were first saved: classes and ranks as int32 (held narrower),
        each record's matched and ignored bits (held as rows of a table) made only as they are written."""
        for field in MATCH_FIELDS:
            if field in ("matched", "ignored"):
                self.add_later(f"{prefix}.{field}", functools.partial(_bits, matches, 0 if field == "matched" else 1))
                continue
            array = getattr(matches, field)
            self.add(f"{prefix}.{field}", array.astype(np.int32) if field in ("classes", "ranks") else array)


def _bits(matches: PageMatches, side: int) -> np.ndarray:
    """The records' matched (side 0) or ignored (1) bits."""
    return matches.patterns[matches.codes, side]


MATCH_FIELDS = ("classes", "scores", "ranks", "matched", "ignored", "ground_truths", "boxes", "page_values")


def _map_text(state: MapState | None) -> MapText | None:
    return None if state is None else MapText(state.convention, state.predicted, state.unscored)


def _summary(evaluation: Evaluation) -> Summary:
    recall, precision = evaluation.matrices.foreground
    per_class = evaluation.matrices.per_class
    report = evaluation.map
    return Summary(
        mode=evaluation.matrices.mode,
        pages=len(evaluation.page_ids),
        classes=evaluation.classes,
        foreground={"recall": recall, "precision": precision, "f1": f1_score(precision, recall)},
        map=None if report is None else {"map": report.map, "map_50": report.map_50, "map_75": report.map_75},
        per_class_f1=None if per_class is None else {name: scores["f1"] for name, scores in per_class.items()},
    )


def write_saved(evaluation: Evaluation, folder: Path, run: RunInfo | None = None, product_version: str = "unknown") -> None:
    """Write `SAVED_FILES` of `evaluation` into `folder` (the caller stages the folder and moves the
    files into place together, the manifest last)."""
    arrays = _Arrays()
    parts = ["tore"]
    arrays.add("tore.page_pixels", evaluation.page_pixels)
    arrays.add("tore.page_reduced", evaluation.page_reduced)
    arrays.add_later("tore.contribution_page", evaluation.contribution_pages)
    arrays.add("tore.contribution_cell", evaluation.contribution_cell)
    arrays.add("tore.contribution_value", evaluation.contribution_value)
    arrays.add_counts("tore.counts", evaluation.counts)
    if evaluation.page_scored is not None:
        arrays.add("tore.page_scored", evaluation.page_scored)
    report = evaluation.map
    if report is not None:
        parts.append("map")
        arrays.add("map.pages", report.pages)
    sweep = evaluation.sweep_state
    records = evaluation.map_state if sweep is not None else None
    if records is not None:
        parts.append("map_records")
        arrays.add_matches("map", records.matches)
    if sweep is not None:
        parts.append("sweep")
        for point, counts in enumerate(sweep.counts):
            arrays.add_counts(f"sweep.counts{point}", counts)
        arrays.add("sweep.reduced", sweep.reduced)
        if sweep.detection is not None:
            arrays.add_matches("sweep.detection", sweep.detection.matches)
    page_counts = evaluation.page_counts()
    if page_counts is not None:  # TIDE's summary and each page's counts; its decisions box by box (200 MB at 100,000 pages) are not kept
        parts.append("boxes")
        arrays.add("boxes.page_counts", page_counts.astype(np.int32))
    taxonomy = evaluation.taxonomy
    text = SavedText(
        taxonomy=TaxonomyText(taxonomy.mode, taxonomy.classes, taxonomy.reference_index, taxonomy.prediction_index,  # type: ignore[arg-type]
                              taxonomy.prediction_vocabulary),
        page_ids=evaluation.page_ids,
        warnings=[WarningText(*row) for row in warning_rows(evaluation.input_warnings)],
        warning_groups=list(evaluation.warning_groups),
        map_reason=evaluation.map_reason,
        map_report=None if report is None else MapReportText(
            report.convention, report.figures, report.per_class,
            {name: PageStatisticsText(**asdict(statistics)) for name, statistics in report.page_stats.items()},
            report.predicted, report.unscored),
        map=_map_text(records),
        sweep_detection=None if sweep is None else _map_text(sweep.detection),
        python_integers=arrays.python,
        decimal_integers=arrays.decimal,
        errors_reason=evaluation.errors_reason,
        errors=None if page_counts is None or evaluation.errors is None else msgspec.convert(evaluation.errors, ErrorsText),
    )
    with zipfile.ZipFile(folder / ARRAYS, "w", zipfile.ZIP_STORED) as archive:  # as `np.savez` writes it, never pickling
        for name, array in arrays.arrays.items():
            with archive.open(_aligned_member(f"{name}.npy", archive.fp.tell() if archive.fp else 0), "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array() if callable(array) else array, allow_pickle=False)
    (folder / TEXT).write_bytes(msgspec.json.encode(text))
    files = {name: _described(folder / name) for name in (ARRAYS, TEXT)}
    manifest = Manifest(FORMAT, VERSION, product_version, datetime.now(timezone.utc).isoformat(timespec="seconds"), parts, files,
                        run or RunInfo(), _summary(evaluation))
    (folder / MANIFEST).write_bytes(msgspec.json.format(msgspec.json.encode(manifest), indent=1) + b"\n")


def _aligned_member(name: str, offset: int) -> zipfile.ZipInfo:
    """A member written at `offset` whose data start on a multiple of 64 bytes: its local header
    padded by an extra field (id 0xD935, as Android's zipalign pads), so that a reader views each
    array in the file's bytes instead of copying it (NumPy's .npy header is itself a multiple of 64)."""
    member = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the earliest date a zip holds: the same bytes each time
    data_start = offset + _LOCAL_HEADER.size + len(name.encode()) + ZIP64_EXTRA + PADDING_FIELD.size
    padding = -data_start % ALIGNMENT
    member.extra = PADDING_FIELD.pack(PADDING_ID, padding) + bytes(padding)
    return member


def _described(path: Path) -> SavedFile:
    """Its size and SHA-256, read in chunks (the arrays of 100,000 pages are 100 MB)."""
    with path.open("rb") as file:
        digest = hashlib.file_digest(file, "sha256").hexdigest()
    return SavedFile(path.stat().st_size, digest)


# --- reading -----------------------------------------------------------------------------------------


def _problem(path: Path, problem: str) -> InputError:
    return InputError(f"{problem}; this is not a saved evaluation this version of TORE Studio can open (docs/cli.md#saved-evaluations)",
                      file=str(path))


def read_manifest(folder: str | Path) -> SavedEvaluation:
    """A saved folder's manifest, checked: the format, its version, the schema."""
    folder = Path(folder)
    if folder.name in ("report.json", MANIFEST) and not folder.is_dir():  # the folder named by one of its files
        folder = folder.parent
    path = folder / MANIFEST
    if not path.exists():
        if (folder / "report.json").exists():
            raise InputError(f"holds a report.json but no {MANIFEST}: it was written by a version of tore evaluate before saved "
                             "evaluations; evaluate again to reopen it", file=str(folder))
        raise InputError(f"is no saved evaluation (no {MANIFEST}: made by `tore evaluate ... --out DIR`)", file=str(folder))
    data = read_bytes(path, max_bytes=MAX_MANIFEST_BYTES)
    try:
        version = msgspec.json.decode(data, type=_Version)
    except msgspec.DecodeError as error:
        raise _problem(path, f"is not a saved evaluation's manifest ({error})") from None
    if version.format != FORMAT:
        raise _problem(path, f"is a {version.format!r} file, not a {FORMAT!r} manifest")
    if version.version != VERSION:
        raise _problem(path, f"holds a saved evaluation of format version {version.version} (written by TORE Studio "
                       f"{version.product_version}); this version reads format version {VERSION} only")
    try:
        manifest = msgspec.json.decode(data, type=Manifest)
    except msgspec.DecodeError as error:
        raise _problem(path, f"does not match the manifest's schema ({error})") from None
    if unknown := [part for part in manifest.parts if part not in PARTS]:
        raise _problem(path, f"holds parts this version does not know ({', '.join(map(repr, unknown))}): a newer version wrote it")
    if "tore" not in manifest.parts or set(manifest.files) != {ARRAYS, TEXT}:
        raise _problem(path, f"must list the part 'tore' and exactly the files {ARRAYS} and {TEXT}")
    return SavedEvaluation(folder, manifest)


def _checked_bytes(folder: Path, name: str, expected: SavedFile) -> bytes:
    """A data file's bytes, read once and checked against the manifest (the same bytes are parsed)."""
    path = folder / name
    data = read_bytes(path, max_bytes=expected.bytes)  # larger than the manifest says: refused before reading
    if len(data) != expected.bytes:
        raise _problem(path, f"is {len(data):,} bytes, the manifest says {expected.bytes:,} (truncated or replaced)")
    if hashlib.sha256(data).hexdigest() != expected.sha256:
        raise _problem(path, "does not have the SHA-256 digest the manifest gives (edited or replaced)")
    return data


def _member_bytes(data: memoryview, member: zipfile.ZipInfo) -> memoryview:
    """A stored (uncompressed) member's bytes as a view of the archive's: no copy, and no CRC (the
    whole file's SHA-256 was checked against the manifest before)."""
    start = member.header_offset
    if start + _LOCAL_HEADER.size > len(data):
        raise ValueError(f"member {member.filename!r} starts beyond the archive's end")
    signature, name_length, extra_length = _LOCAL_HEADER.unpack_from(data, start)
    start += _LOCAL_HEADER.size + name_length + extra_length
    if signature != b"PK\x03\x04" or member.compress_size != member.file_size or start + member.file_size > len(data):
        raise ValueError(f"member {member.filename!r} has a bad local header or lies beyond the archive's end")
    return data[start:start + member.file_size]


def _npy_array(data: memoryview) -> np.ndarray:
    """The array of a .npy file's bytes, as NumPy's `load(allow_pickle=False)` reads it, but viewing
    the bytes instead of copying them: versions 1.0 and 2.0 of the format, no object dtype."""
    header = io.BytesIO(data[:MAX_NPY_HEADER])
    version = np.lib.format.read_magic(header)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"format version {version} of .npy")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran_order, dtype = read_header(header, max_header_size=MAX_NPY_HEADER)
    if dtype.hasobject:
        raise ValueError("an object array, which only pickle reads")
    count = math.prod(shape)  # Python's integers: a hostile shape cannot wrap around to the bytes' size
    if len(data) - header.tell() != count * dtype.itemsize:
        raise ValueError(f"{len(data) - header.tell():,} bytes for {count:,} values of {dtype}")
    array = np.frombuffer(data, dtype=dtype, count=count, offset=header.tell())
    if not array.flags.aligned:  # the compiled kernels take aligned arrays only
        array = array.copy()
    return array.reshape(shape[::-1]).T if fortran_order else array.reshape(shape)


class _StoredArrays:
    """The npz's arrays, each checked before use: dtype, dimensions, and (for indices) range."""

    def __init__(self, path: Path, data: bytes, text: SavedText) -> None:
        self.path = path
        self.python = set(text.python_integers)
        self.decimal = set(text.decimal_integers)
        try:
            members = zipfile.ZipFile(io.BytesIO(data)).infolist()
            if any(member.compress_type != zipfile.ZIP_STORED for member in members) or sum(m.file_size for m in members) > len(data):
                raise ValueError("its members must be stored uncompressed")
            writable = memoryview(bytearray(data))  # one copy, which the arrays share (NumPy's own arrays are writable)
            self.arrays = {member.filename.removesuffix(".npy"): _member_bytes(writable, member) for member in members}
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as error:
            raise _problem(path, f"is not a NumPy archive of arrays ({error})") from None
        self.used: set[str] = set()

    def get(self, name: str, kind: str, ndim: int, rows: int | None = None) -> np.ndarray:
        """Array `name`: of dtype kind `kind` ('i' integer, 'u' unsigned, 'f' float; 'i' also takes the
        decimal text of big integers), `ndim` dimensions and, when given, `rows` rows."""
        if name not in self.arrays:
            raise _problem(self.path, f"lacks the array {name!r}")
        self.used.add(name)
        try:
            array = _npy_array(self.arrays[name])
        except (ValueError, OSError, EOFError) as error:  # an object array, a bad header, too few bytes
            raise _problem(self.path, f"array {name!r} cannot be read ({error})") from None
        if array.ndim != ndim or (rows is not None and len(array) != rows):
            raise _problem(self.path, f"array {name!r} has shape {getattr(array, 'shape', None)}, not {ndim} dimensions"
                           + (f" of {rows:,} rows" if rows is not None else ""))
        if name in self.decimal and array.dtype.kind == "U" and kind == "i":
            try:
                return np.array([int(value) for value in array.ravel().tolist()], dtype=object).reshape(array.shape)
            except ValueError:
                raise _problem(self.path, f"array {name!r} holds text that is not an integer") from None
        if array.dtype.kind != kind or array.dtype.byteorder not in "=|<" or array.dtype.itemsize not in (4, 8):
            raise _problem(self.path, f"array {name!r} has type {array.dtype}, expected {'integers' if kind in 'iu' else 'floats'}")
        if kind == "i" and name in self.python:
            return array.astype(object)
        return array

    def indices(self, name: str, limit: int, rows: int | None = None, low: int = 0) -> np.ndarray:
        """An integer array whose values must lie in [low, limit)."""
        array = self.get(name, "i", 1, rows)
        if len(array) and (int(array.min()) < low or int(array.max()) >= limit):
            raise _problem(self.path, f"array {name!r} has values outside {low} to {limit - 1}")
        return array

    def counts(self, prefix: str, classes: int) -> ExactCounts:
        denominator = self.indices(f"{prefix}.denominator", 2**62, low=1)
        rows = len(denominator)
        return ExactCounts(classes, denominator, self.indices(f"{prefix}.row", classes, rows), self.indices(f"{prefix}.column", classes, rows),
                           self.get(f"{prefix}.numerator", "i", 1, rows))

    def matches(self, prefix: str, classes: int, pages: int) -> PageMatches:
        labels = self.indices(f"{prefix}.classes", classes).astype(CLASS_TYPE, copy=False)
        records = len(labels)
        ranks = self.indices(f"{prefix}.ranks", MAX_DETECTIONS[-1], records).astype(RANK_TYPE, copy=False)
        return PageMatches.from_bits(labels, self.get(f"{prefix}.scores", "f", 1, records), ranks,
                           self.get(f"{prefix}.matched", "u", 1, records), self.get(f"{prefix}.ignored", "u", 1, records),
                           self.get(f"{prefix}.ground_truths", "i", 2, classes), self.get(f"{prefix}.boxes", "i", 1, classes),
                           self.get(f"{prefix}.page_values", "f", 2, pages))

    def check_all_used(self) -> None:
        if unused := sorted(set(self.arrays) - self.used):
            raise _problem(self.path, f"holds arrays this version does not know ({', '.join(map(repr, unused[:5]))})")


def _map_state(text: MapText | None, matches: Callable[[], PageMatches], path: Path) -> MapState | None:
    if text is None:
        return None
    if text.convention not in CONVENTIONS:
        raise _problem(path, f"names the mAP convention {text.convention!r}; known: {', '.join(CONVENTIONS)}")
    return MapState(text.convention, (matches(),), text.predicted, text.unscored, ranked=True)  # saved as `MapState.matches` gave them


def _text(folder: Path, manifest: Manifest) -> SavedText:
    path = folder / TEXT
    try:
        return msgspec.json.decode(_checked_bytes(folder, TEXT, manifest.files[TEXT]), type=SavedText)
    except msgspec.DecodeError as error:
        raise _problem(path, f"does not match the saved text's schema ({error})") from None


def _taxonomy(text: TaxonomyText, path: Path) -> Taxonomy:
    size = len(text.classes)
    indices = [*text.reference_index.values(), *text.prediction_index.values()]
    if size < 2 or len(set(text.classes)) != size or any(not 0 <= k < size for k in indices):
        raise _problem(path, "holds a taxonomy whose classes are not distinct, or whose labels point outside them")
    return Taxonomy(text.mode, text.classes, text.reference_index, text.prediction_index, text.prediction_vocabulary)


def open_saved(folder: str | Path) -> Evaluation:
    """The evaluation saved in `folder` (`write_saved`), without its inputs; an `InputError` naming
    the file for anything truncated, edited, foreign or of another version."""
    saved = read_manifest(folder)
    folder, manifest = saved.folder, saved.manifest
    text = _text(folder, manifest)
    text_path, arrays_path = folder / TEXT, folder / ARRAYS
    taxonomy = _taxonomy(text.taxonomy, text_path)
    if len(text.warning_groups) != 4 or sum(text.warning_groups) > len(text.warnings) or min(text.warning_groups) < 0:
        raise _problem(text_path, "holds warning groups that do not fit its warnings")
    if len(set(text.page_ids)) != len(text.page_ids):
        raise _problem(text_path, "lists a page id twice")
    if (("map" in manifest.parts) != (text.map_report is not None) or ("map_records" in manifest.parts) != (text.map is not None)
            or ("sweep" not in manifest.parts and (text.sweep_detection is not None or text.map is not None))):
        raise _problem(text_path, f"does not hold the parts {MANIFEST} lists")
    arrays = _StoredArrays(arrays_path, _checked_bytes(folder, ARRAYS, manifest.files[ARRAYS]), text)
    pages, k = len(text.page_ids), taxonomy.size
    page_reduced = arrays.get("tore.page_reduced", "i", 3, pages)
    contribution_page = arrays.indices("tore.contribution_page", pages)
    if np.any(contribution_page[1:] < contribution_page[:-1]):
        raise _problem(arrays_path, "array 'tore.contribution_page' is not in page order")
    entries = len(contribution_page)
    counts = arrays.counts("tore.counts", k)
    if page_reduced.shape[1:] != (2, 2):
        raise _problem(arrays_path, "array 'tore.page_reduced' is not one 2 x 2 matrix a page")
    sweep_state = None
    if "sweep" in manifest.parts:
        reduced = arrays.get("sweep.reduced", "i", 3, POINTS)
        detection = _map_state(text.sweep_detection, lambda: arrays.matches("sweep.detection", k, pages), text_path)
        sweep_state = SweepState(tuple(arrays.counts(f"sweep.counts{point}", k) for point in range(POINTS)), reduced, detection)
    evaluation = Evaluation(
        taxonomy=taxonomy,
        page_ids=text.page_ids,
        page_pixels=arrays.get("tore.page_pixels", "i", 1, pages),
        page_reduced=page_reduced,
        contribution_offsets=offsets_of(np.bincount(contribution_page, minlength=pages)),
        contribution_cell=arrays.indices("tore.contribution_cell", k * k, entries),
        contribution_value=arrays.get("tore.contribution_value", "f", 1, entries),
        counts=counts,
        matrices=ToreMatrices.from_counts(taxonomy.mode, taxonomy.classes, counts, page_reduced.sum(axis=0)),
        input_warnings=PackedWarnings.of_rows(text.warnings),  # packed from the rows as decoded: no warning object made at open
        warning_groups=tuple(text.warning_groups),
        map_state=_map_state(text.map, lambda: arrays.matches("map", k, pages), text_path),
        map_reason=text.map_reason,
        sweep_state=sweep_state,
        page_scored=arrays.get("tore.page_scored", "i", 1, pages) if "tore.page_scored" in arrays.arrays else None,
        errors_reason=text.errors_reason,
    )
    if "boxes" in manifest.parts:
        counts_array = arrays.get("boxes.page_counts", "i", 2, pages)
        if counts_array.shape[1:] != (len(PAGE_COUNT_COLUMNS),) or (len(counts_array) and int(counts_array.min()) < 0):
            raise _problem(arrays_path, "array 'boxes.page_counts' is not one row of counts a page")
        evaluation.prefill_errors(None if text.errors is None else msgspec.structs.asdict(text.errors), counts_array.astype(np.int64))
    if text.map_report is not None:
        report = _map_report(text.map_report, arrays.get("map.pages", "f", 2, pages), text_path)
        evaluation.map_records_dropped = text.map is None
        evaluation.prefill_map(report)
    arrays.check_all_used()
    return evaluation


def _map_report(text: MapReportText, pages: np.ndarray, path: Path) -> MapReport:
    if text.convention not in CONVENTIONS or pages.shape[1:] != (3,):
        raise _problem(path, f"holds an mAP summary of convention {text.convention!r} or of {pages.shape} page values")
    try:
        statistics = {name: PageStatistics(**msgspec.structs.asdict(value)) for name, value in text.page_stats.items()}
    except TypeError as error:
        raise _problem(path, f"holds mAP page statistics that do not fit ({error})") from None
    return MapReport(text.convention, text.figures, text.per_class, pages, statistics, text.predicted, text.unscored)


MAX_DEPTH = 4  # folders below the one searched
MAX_FOLDERS = 20_000  # folders looked into: a search of a large data root ends


def _manifests(folder: Path, limit: int) -> list[Path]:
    """The manifests in `folder` and its subfolders (at most `MAX_DEPTH` down, hidden folders and
    links left out), in path order, at most `limit` of them, after at most `MAX_FOLDERS` folders."""
    found, visited = [], 0
    for current, folders, files in os.walk(folder):
        visited += 1
        depth = len(Path(current).relative_to(folder).parts)
        folders[:] = sorted(name for name in folders if not name.startswith(".") and depth < MAX_DEPTH
                            and not os.path.islink(os.path.join(current, name)))
        if MANIFEST in files:
            found.append(Path(current) / MANIFEST)
        if len(found) >= limit or visited >= MAX_FOLDERS:
            break
    return sorted(found)


def saved_evaluations(folder: Path, *, limit: int = 1000) -> list[SavedEvaluation | InputError]:
    """The saved evaluations in `folder` and its subfolders (`_manifests`), each its manifest, or
    the error that names why it cannot be read (a list of runs shows both)."""
    found: list[SavedEvaluation | InputError] = []
    for manifest in _manifests(folder, limit):
        try:
            found.append(read_manifest(manifest.parent))
        except InputError as error:
            found.append(error)
    return found


def run_info(values: Mapping[str, Any]) -> RunInfo:
    """A `RunInfo` of the options given (paths made absolute, unknown keys refused)."""
    given = {key: (str(Path(value).absolute()) if isinstance(value, Path) else value) for key, value in values.items() if value is not None}
    return msgspec.convert(given, RunInfo)
