"""The repository's documentation holds together: every `docs/<file>.md` (with its `#heading`) that the
code, the tests, the benchmarks, README.md and the docs themselves cite exists, and nothing cites the
specifications that lived outside the repository (a reader of a clone cannot open them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import REPOSITORY

DOCS = REPOSITORY / "docs"
CITING = [REPOSITORY / "README.md", *sorted(DOCS.glob("*.md"))] + sorted(
    path for folder in ("tore_engine", "tests", "benchmarks") for pattern in ("*.py", "*.md")
    for path in (REPOSITORY / folder).rglob(pattern) if "_work" not in path.parts)
CITATION = re.compile(r"docs/([\w./-]+\.(?:md|png))(?:#([\w-]+))?")
RELATIVE_LINK = re.compile(r"\]\((?!https?:)([\w./-]+\.md)?(?:#([\w-]+))?\)")  # a Markdown link inside docs/
OUTSIDE_SPEC = re.compile(r"(?<![\w/.\"-])(?:formats|tore|app|funsd|docile|omnidocbench)\.md\b")


def anchors(markdown: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated one numbered."""
    seen: dict[str, int] = {}
    result = set()
    in_code = False
    for line in markdown.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def citations() -> list[tuple[str, Path, str | None]]:
    """(where it is cited, the file cited, the heading or None) for every citation found, each once."""
    found = []
    for path in CITING:
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(REPOSITORY))
        found += [(where, DOCS / name, heading or None) for name, heading in CITATION.findall(text)]
        if path.parent == DOCS:
            found += [(where, DOCS / name if name else path, heading or None) for name, heading in RELATIVE_LINK.findall(text)]
    return sorted(set(found), key=str)


def test_the_documentation_is_there_and_cited():
    assert {"algorithm.md", "api.md", "benchmarks.md", "cli.md", "formats.md", "threat-model.md"} <= {p.name for p in DOCS.glob("*.md")}
    cited = citations()
    assert len(cited) > 100  # the code cites the docs: a pattern that stopped matching would pass vacuously
    assert {path.name for _, path, _ in cited} >= {"algorithm.md", "benchmarks.md", "cli.md", "formats.md", "app.md"}


@pytest.mark.parametrize("where, cited, heading", citations(), ids=lambda value: str(value).replace(str(REPOSITORY) + "/", ""))
def test_every_citation_resolves(where, cited, heading):
    assert cited.is_file(), f"{where} cites {cited.relative_to(REPOSITORY)}, which does not exist"
    if heading is not None:
        assert heading in anchors(cited), f"{where} cites {cited.relative_to(REPOSITORY)}#{heading}: no such heading"


def test_nothing_cites_a_specification_outside_the_repository():
    stale = [f"{path.relative_to(REPOSITORY)}:{number}: {line.strip()}" for path in CITING if path.parent != DOCS
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if OUTSIDE_SPEC.search(line)]
    assert stale == []


def test_the_readme_is_a_landing_page():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) < 10_000
    picture = REPOSITORY / "docs" / "matrices.png"
    assert readme.count("](docs/matrices.png)") == 1 and picture.stat().st_size < 200_000
