"""The pages' words: a thin face on the one gettext catalogue (``appliance/words.py``, docs/words.md).

Templates call ``t("key")`` and ``tn("key", count=6)``; scripts get the same catalogue (``SVOYAK.strings``, with
its plural rule) and call ``t("key")`` and ``SVOYAK.word("key", {count: 6})`` from ``static/js/svoyak.js``.

>>> catalogue = Catalogue()
>>> catalogue.text("app.name", "ru"), catalogue.text("app.name", "en")
('Своя игра', 'Svoyak')
>>> catalogue.text("missing", "en")
'missing'
>>> catalogue.word("count.themes", "ru", count=6)
'6 тем'
"""

from __future__ import annotations

import appliance.words as words

LANGUAGES = words.LANGUAGES


class Catalogue:
    """The catalogue as the web layer reads it (by key, in the request's language)."""

    def text(self, key: str, language: str) -> str:
        """The message in ``language``; a missing key shows as itself, so a gap is visible, not fatal."""
        return words.gettext(key, language)

    def word(self, key: str, language: str, /, **values) -> str:
        """The message with ``values`` filled in, its counts worded by the plural rule."""
        return words.word(key, language, **values)

    def both(self, key: str, /, **values) -> dict[str, str]:
        """``{"ru": ..., "en": ...}``: for messages that name both languages (rejections)."""
        return words.both(key, **values)

    def for_language(self, language: str) -> dict:
        """What a page's scripts get: ``{"messages": {...}, "plural": "nplurals=...; plural=...;"}``."""
        return words.catalogue_json(language)

    def __contains__(self, key: str) -> bool:
        return words.has(key)


def default_catalogue(*_screen_modules) -> Catalogue:
    """The one catalogue (the screens keep no words of their own)."""
    return Catalogue()
