"""The embedded demo: a synthetic corpus of PDF pages drawn with PyMuPDF, its exact ground-truth
layout (11 DocLayNet classes) and the predictions of two *simulated* models, so that the app opens
on real-looking data with no setup and no third-party documents.

Regenerate the committed files with `python -m tore_engine.demo --out tore_engine/demo/data`.
Modules: `text` (filler words), `ink` (drawing with exact extents), `graphics`, `tables`,
`formulas` (what is drawn), `blocks` and `compose` (page layout), `documents` (the four
documents), `models` (the simulated predictions), `corpus` (building and writing it all).
"""

from tore_engine.demo.corpus import REFERENCE_TAXONOMY, build_corpus, generate
from tore_engine.demo.models import MODEL_B_TAXONOMY

__all__ = ["MODEL_B_TAXONOMY", "REFERENCE_TAXONOMY", "build_corpus", "generate"]
