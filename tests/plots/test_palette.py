"""The palette (tore_engine.plots.palette): the agreement colours are colour-blind safe and no class's."""

from __future__ import annotations

from tore_engine.plots.palette import AGREEMENT_STYLES, FIXED, HASHED


def test_agreement_colours_are_colour_blind_safe_and_no_class_colour():
    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
    colours = [colour for colour, _ in AGREEMENT_STYLES.values()]
    assert set(colours) <= okabe_ito and len(set(colours)) == len(colours)
    class_colours = {colour.upper() for colour in [*FIXED.values(), *HASHED]}
    assert not class_colours & set(colours)
    assert len({hatch for _, hatch in AGREEMENT_STYLES.values()}) == len(AGREEMENT_STYLES)  # told apart without colour too
