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


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x")):
        return noun + "es"
    if noun.endswith("y"):
        return noun[:-1] + "ies"
    return noun + "s"


class TextMaker:
    """Seeded source of words, sentences, paragraphs, headings and names."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _noun_phrase(self) -> tuple[str, bool]:
        """A noun phrase and whether it is plural."""
        noun = self.rng.choice(NOUNS)
        plural = self.rng.random() < 0.3
        if plural:
            noun = _plural(noun)
        if self.rng.random() < 0.6:
            noun = f"{self.rng.choice(ADJECTIVES)} {noun}"
        return noun, plural

    def sentence(self) -> str:
        parts = []
        if self.rng.random() < 0.25:
            parts += [self.rng.choice(CONNECTIVES), "the"]
        else:
            parts.append("The")
        subject, plural = self._noun_phrase()
        parts.append(subject)
        if self.rng.random() < 0.3:
            parts.append(self.rng.choice(ADVERBS))
        verb = self.rng.choice(VERBS)
        parts += [verb[:-1] if plural else verb, "the", self._noun_phrase()[0]]
        for _ in range(self.rng.randint(0, 2)):
            parts += [self.rng.choice(PREPOSITIONS), "the", self._noun_phrase()[0]]
        if self.rng.random() < 0.15:
            parts.append(f"by {self.rng.randint(2, 48)} percent")
        return " ".join(parts) + "."

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def heading(self, max_words: int = 4) -> str:
        words = [self.rng.choice(ADJECTIVES).capitalize()]
        words += self.rng.sample(NOUNS, self.rng.randint(1, max_words - 1))
        if self.rng.random() < 0.4:
            words += ["and", _plural(self.rng.choice(NOUNS))]
        return " ".join(words)

    def title(self) -> str:
        words = [w.capitalize() for w in self.heading(5).split()]
        return " ".join(w if w != "And" else "and" for w in words)

    def short_label(self) -> str:
        return self.rng.choice(NOUNS).capitalize()

    def person(self) -> str:
        return f"{self.rng.choice(INITIALS)}. {self.rng.choice(SURNAMES)}"
