"""Display formulas, typeset with a tiny box model: runs of text (italic variables, Greek from the
Symbol font), sub- and superscripts, fractions with a bar, and big operators with limits.

Each atom knows its width, ascent and descent around the baseline, so the formula can be centred
and its drawn extent is exact.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tore_engine.demo.ink import BLACK, FontSpec, Ink


@dataclass
class Run:
    """Text on the baseline, shifted down by `dy` (negative: up, for superscripts)."""

    text: str
    font: FontSpec
    dy: float = 0.0

    def metrics(self) -> tuple[float, float, float]:
        return self.font.width(self.text), self.font.ascent - self.dy, self.font.descent + self.dy

    def draw(self, ink: Ink, x: float, baseline: float) -> None:
        ink.text(x, baseline + self.dy, self.text, self.font)


@dataclass
class Row:
    items: list
    space: float = 1.2

    def metrics(self) -> tuple[float, float, float]:
        sizes = [item.metrics() for item in self.items]
        width = sum(w for w, _, _ in sizes) + self.space * (len(sizes) - 1)
        return width, max(a for _, a, _ in sizes), max(d for _, _, d in sizes)

    def draw(self, ink: Ink, x: float, baseline: float) -> None:
        for item in self.items:
            item.draw(ink, x, baseline)
            x += item.metrics()[0] + self.space


@dataclass
class Fraction:
    numerator: Row
    denominator: Row
    axis: float  # height of the bar above the baseline
    gap: float = 2.0

    def metrics(self) -> tuple[float, float, float]:
        nw, na, nd = self.numerator.metrics()
        dw, da, dd = self.denominator.metrics()
        return max(nw, dw) + 4, self.axis + self.gap + na + nd, da + dd + self.gap - self.axis

    def draw(self, ink: Ink, x: float, baseline: float) -> None:
        width = self.metrics()[0]
        bar = baseline - self.axis
        ink.line([(x, bar), (x + width, bar)], BLACK, 0.6)
        nw, _, nd = self.numerator.metrics()
        dw, da, _ = self.denominator.metrics()
        self.numerator.draw(ink, x + (width - nw) / 2, bar - self.gap - nd)
        self.denominator.draw(ink, x + (width - dw) / 2, bar + self.gap + da)


@dataclass
class BigOperator:
    """A large Symbol-font operator (S is capital sigma) with limits centred below and above."""

    symbol: Run
    lower: Row
    upper: Row

    @property
    def _upper_baseline(self) -> float:
        """Offset above the baseline of the upper limit: just over the glyph's visible top."""
        return self.symbol.font.size * 0.75 + self.upper.metrics()[2]

    def metrics(self) -> tuple[float, float, float]:
        sw, sa, sd = self.symbol.metrics()
        lw, la, ld = self.lower.metrics()
        uw, ua, _ = self.upper.metrics()
        return max(sw, lw, uw), max(sa, self._upper_baseline + ua), sd + la + ld

    def draw(self, ink: Ink, x: float, baseline: float) -> None:
        width = self.metrics()[0]
        sw, _, sd = self.symbol.metrics()
        self.symbol.draw(ink, x + (width - sw) / 2, baseline)
        lw, la, _ = self.lower.metrics()
        self.lower.draw(ink, x + (width - lw) / 2, baseline + sd + la)
        uw = self.upper.metrics()[0]
        self.upper.draw(ink, x + (width - uw) / 2, baseline - self._upper_baseline)


class FormulaMaker:
    """Random display formulas of a few plausible shapes, at one font size."""

    def __init__(self, rng: random.Random, size: float) -> None:
        self.rng = rng
        self.size = size
        self.italic = FontSpec("tiit", size)
        self.roman = FontSpec("tiro", size)
        self.greek = FontSpec("symb", size)
        self.small = FontSpec("tiit", size * 0.7)
        self.small_roman = FontSpec("tiro", size * 0.7)

    def _var(self, name: str, index: str | None = None, power: str | None = None) -> Row:
        items: list = [Run(name, self.italic)]
        if index:
            items.append(Run(index, self.small, self.size * 0.25))
        if power:
            items.append(Run(power, self.small_roman, -self.size * 0.4))
        return Row(items, space=0.4)

    def _op(self, text: str) -> Run:
        return Run(text, self.roman)

    def _sum(self, index: str, top: str) -> BigOperator:
        return BigOperator(
            Run("S", FontSpec("symb", self.size * 1.6)),
            Row([Run(f"{index}=1", self.small_roman)]),
            Row([Run(top, self.small)]),
        )

    def _frac(self, top: list, bottom: list) -> Fraction:
        return Fraction(Row(top), Row(bottom), axis=self.size * 0.3)

    def _greek(self, letter: str) -> Run:
        """A Greek letter: the Symbol font draws 'a' as alpha, 'b' as beta, 's' as sigma..."""
        return Run(letter, self.greek)

    def _squared(self) -> Run:
        return Run("2", self.small_roman, -self.size * 0.4)

    def make(self) -> Row:
        shape = self.rng.randrange(4)
        y, x, w = self.rng.choice("yzuvfgh"), self.rng.choice("xrst"), self.rng.choice("wab")
        op, var, greek = self._op, self._var, self._greek
        if shape == 0:  # weighted sum
            items = [var(y, "i"), op("="), self._sum("j", "n"), var(w, "ij"), var(x, "j"), op("+"), var("b", "i")]
        elif shape == 1:  # mean squared error
            one_over_n = self._frac([Run("1", self.roman)], [Run("N", self.italic)])
            items = [Run("L", self.italic), op("="), one_over_n, self._sum("i", "N"),
                     op("("), var(y, "i"), op("-"), var(x, "i"), op(")"), self._squared()]
        elif shape == 2:  # rational function with Greek parameters
            numerator = [greek("a"), var(x, power="2"), op("+"), greek("b"), var(x)]
            items = [var(y), op("="), self._frac(numerator, [var(x), op("+"), greek("g")])]
        else:  # normalised weighted sum
            numerator = [self._sum("k", "K"), var(w, "k"), var(x, "k")]
            denominator = [var("N"), op("\u00d7"), greek("s"), self._squared()]
            items = [greek("r"), op("="), self._frac(numerator, denominator)]
        return Row(items, space=2.2)
