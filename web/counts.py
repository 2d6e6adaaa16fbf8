"""Counts in words for the desk's pages: ``{count:тема|темы|тем}`` in a catalogue line is the word for ``count``
(Russian: the forms for 1, 2-4 and 5; English: for 1 and the rest).

The same interface as the project's one plural rule (``appliance.words.format_counts``, the host engineer's);
this module gives way to it when both branches meet.

>>> format_counts("{count} {count:тема|темы|тем}", "ru", count=21), format_counts("{n:бой|боя|боёв}", "ru", n=12)
('21 тема', 'боёв')
>>> format_counts("{count} {count:theme|themes}", "en", count=1)
'1 theme'
"""

from __future__ import annotations

import re

_FORMS = re.compile(r"\{(\w+):([^{}|]*(?:\|[^{}|]*)+)\}")


def plural_index(count: int, language: str = "ru") -> int:
    """Which form a count takes: Russian 0 (1, 21), 1 (2-4, 22-24), 2 (0, 5-20, 25-30); English 0 or 1."""
    n = abs(int(count))
    if language != "ru":
        return 0 if n == 1 else 1
    if n % 10 == 1 and n % 100 != 11:
        return 0
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return 1
    return 2


def format_counts(template: str, language: str = "ru", **values) -> str:
    """``template`` with its ``{name:forms}`` worded from ``values[name]``, then ``str.format``-ed."""
    def word(match) -> str:
        forms = match.group(2).split("|")
        return forms[min(plural_index(values[match.group(1)], language), len(forms) - 1)].replace(
            "{", "{{").replace("}", "}}")

    return _FORMS.sub(word, template).format(**values)
