"""Plausible English filler text, made up word by word from a small vocabulary.

The demo must ship no copyrighted text, so every sentence is assembled here from generic words by
a seeded `random.Random`; the same seed always gives the same words.
"""

from __future__ import annotations

import random

NOUNS = (
    "analysis method model system result process network budget report sample region market "
    "measure value layer record signal design policy service program feature table figure period "
    "revenue customer account quality pattern structure factor section sensor device output input "
    "estimate benchmark dataset partner project growth capacity interval response document page "
    "framework operator surface channel segment threshold baseline variant component strategy"
).split()
ADJECTIVES = (
    "annual relative robust simple modest stable regional internal external average typical "
    "overall notable previous current initial final recent larger smaller early late central "
    "digital manual optional primary secondary steady uneven broad narrow careful direct"
).split()
VERBS = (
    "improves reduces describes supports measures compares extends reflects follows exceeds "
    "requires shows includes combines limits increases affects summarises confirms separates"
).split()
ADVERBS = "clearly slightly largely mostly rarely often steadily partly jointly mainly".split()
CONNECTIVES = (
    "In practice,|As a result,|For this reason,|In contrast,|At the same time,|Overall,|"
    "In most cases,|By comparison,|Over the period,|Taken together,"
).split("|")
PREPOSITIONS = "of in for across within along between under over through".split()
SURNAMES = (
    "Albers Brandt Castell Dorsey Ekholm Farrow Galvin Hollis Ivers Jansen Kaplan Lindqvist "
    "Moreau Nakamura Okafor Petrov Quinlan Rossi Sandoval Tanaka Ueda Varga Whitlock Yilmaz"
).split()
INITIALS = "ABCDEFGHJKLMNPRST"


class TextMaker:
    """Seeded source of words, sentences, paragraphs, headings and names."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _noun_phrase(self) -> str:
        words = [self.rng.choice(NOUNS)]
        if self.rng.random() < 0.6:
            words.insert(0, self.rng.choice(ADJECTIVES))
        if self.rng.random() < 0.3:
            words[-1] += "s"
        return " ".join(words)

    def sentence(self) -> str:
        parts = []
        if self.rng.random() < 0.25:
            parts.append(self.rng.choice(CONNECTIVES))
            parts.append("the")
        else:
            parts.append("The")
        parts.append(self._noun_phrase())
        if self.rng.random() < 0.3:
            parts.append(self.rng.choice(ADVERBS))
        parts.append(self.rng.choice(VERBS))
        parts += ["the", self._noun_phrase()]
        for _ in range(self.rng.randint(0, 2)):
            parts += [self.rng.choice(PREPOSITIONS), "the", self._noun_phrase()]
        if self.rng.random() < 0.15:
            parts.append(f"by {self.rng.randint(2, 48)} percent")
        return " ".join(parts) + "."

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def heading(self, max_words: int = 4) -> str:
        words = [self.rng.choice(ADJECTIVES).capitalize()]
        words += [self.rng.choice(NOUNS) for _ in range(self.rng.randint(1, max_words - 1))]
        if self.rng.random() < 0.4:
            words += ["and", self.rng.choice(NOUNS) + "s"]
        return " ".join(words)

    def title(self) -> str:
        words = [w.capitalize() for w in self.heading(5).split()]
        return " ".join(w if w != "And" else "and" for w in words)

    def short_label(self) -> str:
        return self.rng.choice(NOUNS).capitalize()

    def person(self) -> str:
        return f"{self.rng.choice(INITIALS)}. {self.rng.choice(SURNAMES)}"
