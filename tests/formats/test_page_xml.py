"""PAGE-XML: every region type, Coords as polygons (2013+ `points` and 2010 `Point`s), `@type` or the
region's element as its class, reading order, detection, and no entity expansion."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tore_engine.core.errors import InputError
from tore_engine.formats.detect import detect_format
from tore_engine.formats.page_xml import read

NAMESPACE = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"


def page_xml(body: str, order: str = "") -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<PcGts xmlns="{NAMESPACE}"><Metadata><Creator>t</Creator></Metadata>'
            f'<Page imageFilename="scan.png" imageWidth="200" imageHeight="100">{order}{body}</Page></PcGts>')


def test_regions_polygons_classes_and_reading_order(tmp_path):
    body = ('<TextRegion id="r1" type="paragraph"><Coords points="10,10 50,12 40,30"/><TextLine id="l1"><Coords points="11,11 12,11 12,12"/></TextLine></TextRegion>'
            '<ImageRegion id="r2"><Coords points="60,5 90,5 90,40 60,40"/></ImageRegion>'
            '<TableRegion id="r3"><Coords points="0,50 100,50 100,90 0,90"/>'
            '<TextRegion id="r4" type="heading"><Coords points="5,55 20,55 20,60"/></TextRegion></TableRegion>')
    order = ('<ReadingOrder><OrderedGroup id="g"><RegionRefIndexed index="1" regionRef="r1"/>'
             '<RegionRefIndexed index="0" regionRef="r3"/></OrderedGroup></ReadingOrder>')
    (tmp_path / "p1.xml").write_text(page_xml(body, order))
    assert detect_format(tmp_path / "p1.xml") == "page-xml" and detect_format(tmp_path) == "page-xml"
    page = read(tmp_path).pages[0]
    assert (page.id, page.width, page.height) == ("p1", 200, 100)
    assert page.labels == ["TableRegion", "paragraph", "ImageRegion", "heading"]  # ordered ones first, then document order
    assert page.polygons.outline(1).tolist() == [[10, 10], [50, 12], [40, 30]]
    assert page.bboxes.tolist() == [[0, 50, 100, 90], [10, 10, 50, 30], [60, 5, 90, 40], [5, 55, 20, 60]]


def test_2010_points_and_entities_are_not_expanded(tmp_path):
    old = ('<TextRegion id="r1"><Coords><Point x="1" y="2"/><Point x="8" y="2"/><Point x="8" y="9"/></Coords></TextRegion>')
    (tmp_path / "old.xml").write_text(page_xml(old))
    assert read(tmp_path / "old.xml").pages[0].polygons.outline(0).tolist() == [[1, 2], [8, 2], [8, 9]]
    bomb = ('<?xml version="1.0"?><!DOCTYPE PcGts [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            f'<PcGts xmlns="{NAMESPACE}"><Page imageWidth="&b;" imageHeight="10"/></PcGts>')
    (tmp_path / "bomb.xml").write_text(bomb)
    with pytest.raises(InputError, match="imageWidth"):
        read(tmp_path / "bomb.xml")


def test_a_region_without_numbers_names_file_page_and_region(tmp_path):
    (tmp_path / "p.xml").write_text(page_xml('<TextRegion id="r9"><Coords points="1,a 2,2 3,3"/></TextRegion>'))
    with pytest.raises(InputError, match="TextRegion 'r9'") as error:
        read(tmp_path / "p.xml")
    assert "p.xml" in str(error.value) and "page 'p'" in str(error.value)


REAL_PAGE = Path(os.environ.get("TORE_REAL_PAGE_XML", "/tmp/tore-real/PAGE_0017_PAGE.xml"))


@pytest.mark.skipif(not REAL_PAGE.exists(), reason=f"no real PAGE-XML file at {REAL_PAGE} (OCR-D/assets, "
                    "data/kant_aufklaerung_1784/data/OCR-D-GT-PAGE/PAGE_0017_PAGE.xml; not committed: that repository names no licence)")
def test_a_real_ocr_d_page_reads_to_the_regions_the_standard_library_finds(tmp_path):
    """The regions of a real OCR-D ground-truth page, read independently with xml.etree, in
    reading order, against the reader's polygons; then the page evaluates against itself."""
    import xml.etree.ElementTree as ElementTree

    from tore_engine.run.runner import evaluate_dataset

    root = ElementTree.parse(REAL_PAGE).getroot()
    namespace = root.tag.split("}")[0] + "}"
    page_element = root.find(f"{namespace}Page")
    order = {ref.get("regionRef"): int(ref.get("index")) for ref in page_element.iter(f"{namespace}RegionRefIndexed")}
    regions = [e for e in page_element.iter() if e.tag.endswith("Region") and e.tag != f"{namespace}Region"]
    regions.sort(key=lambda e: order.get(e.get("id"), len(order)))
    expected = [[[float(v) for v in pair.split(",")] for pair in e.find(f"{namespace}Coords").get("points").split()] for e in regions]
    layout = read(REAL_PAGE)
    page = layout.pages[0]
    assert (page.width, page.height) == (float(page_element.get("imageWidth")), float(page_element.get("imageHeight")))
    assert [page.polygons.outline(k).tolist() for k in range(page.box_count)] == expected
    assert page.labels == [e.get("type") or e.tag.split("}")[1] for e in regions]
    evaluation = evaluate_dataset(layout, layout, taxonomy="single")
    assert evaluation.matrices.foreground == (1.0, 1.0)
