"""TEDS (tore_engine.scorers.omnidocbench.pair_metrics), exactly the official values."""

from __future__ import annotations

from tests.scorers.omnidocbench.helpers import official
from tore_engine.scorers.omnidocbench.pair_metrics import teds


def test_teds_equals_the_official_values_on_the_ten_demo_tables():
    rows = official("table_result")
    assert len(rows) == 10
    for row in rows:
        assert teds(row["norm_pred"], row["norm_gt"]) == row["metric"]["TEDS"]
        assert teds(row["norm_pred"], row["norm_gt"], structure_only=True) == row["metric"]["TEDS_structure_only"]
    assert teds("", rows[0]["norm_gt"]) == 0.0


def test_a_span_that_is_no_integer_scores_zero_as_upstream():
    # upstream's int(colspan) raises in its worker process, which scores the pair 0
    table = '<html><body><table border="1" ><tr><td colspan="x">a</td></tr></table></body></html>'
    assert teds(table, table) == 0.0
    assert teds(table.replace(' colspan="x"', ""), table.replace(' colspan="x"', "")) == 1.0
