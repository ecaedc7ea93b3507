"""Metrics computed from the boxes or from the TORE counts."""
