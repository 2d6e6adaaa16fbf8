"""Counts in words: the one plural rule behind every number a person reads (1 тема, 2 темы, 5 тем).

Shared like settings and errors (the service words refusals, the web words pages and the protocol); the pages
run the same rule in ``web/static/js/svoyak.js`` (``SVOYAK.plural``, ``SVOYAK.format``), and
``tests/web/test_host_browser.py`` checks that both give the same word for every count from 0 to 200.

A line of a catalogue names its plural forms in place: ``{count:тема|темы|тем}`` is the word for ``count``
(Russian: the forms for 1, 2-4 and 5; English: for 1 and the rest), ``{count}`` the figure itself.

>>> format_counts("{count} {count:тема|темы|тем}", "ru", count=21)
'21 тема'
>>> format_counts("{count} {count:тема|темы|тем}", "ru", count=12)
'12 тем'
>>> format_counts("{count} {count:theme|themes}", "en", count=1)
'1 theme'
>>> format_counts("из {total}", "ru", total=4)
'из 4'
"""

from __future__ import annotations

import re

_FORMS = re.compile(r"\{(\w+):([^{}|]*(?:\|[^{}|]*)+)\}")


def plural_index(count: int, language: str = "ru") -> int:
    """Which form a count takes: Russian 0 (1, 21, 101), 1 (2-4, 22-24), 2 (5-20, 25-30, 11-14); English 0 or 1.

    >>> [plural_index(n) for n in (0, 1, 2, 4, 5, 11, 12, 14, 21, 22, 25, 101, 111, 112, 122)]
    [2, 0, 1, 1, 2, 2, 2, 2, 0, 1, 2, 0, 2, 2, 1]
    >>> plural_index(-1), plural_index(1, "en"), plural_index(0, "en"), plural_index(2, "en")
    (0, 0, 1, 1)
    """
    n = abs(int(count))
    if language != "ru":
        return 0 if n == 1 else 1
    if n % 10 == 1 and n % 100 != 11:
        return 0
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return 1
    return 2


def plural(count: int, forms: str, language: str = "ru") -> str:
    """The word for ``count`` among ``forms`` ("тема|темы|тем"; English "theme|themes").

    >>> plural(3, "игрок|игрока|игроков"), plural(5, "игрок|игрока|игроков"), plural(2, "player|players", "en")
    ('игрока', 'игроков', 'players')
    """
    words = forms.split("|")
    return words[min(plural_index(count, language), len(words) - 1)]


def format_counts(template: str, language: str = "ru", **values) -> str:
    """``template`` with its ``{name:forms}`` worded by :func:`plural` from ``values[name]``, then
    ``str.format``-ed with ``values``. Raises ``KeyError`` for a name ``values`` lacks (like ``str.format``)."""
    worded = _FORMS.sub(lambda match: plural(values[match.group(1)], match.group(2), language)
                        .replace("{", "{{").replace("}", "}}"), template)
    return worded.format(**values)


__all__ = ["format_counts", "plural", "plural_index"]
