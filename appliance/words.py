"""Every word a person reads, from gettext catalogues: ``appliance/locale/<lang>/LC_MESSAGES/messages.po``.

The box speaks Russian by default and English when chosen; another language is one more ``.po`` file
(docs/words.md). Message ids are keys (``"conn.online"``, ``"refusal.battle.no_such_player"``), the same in
every language, so a sentence can change in one language without touching code or the other catalogues.
``./dev`` compiles the ``.po`` files to ``.mo`` (``pybabel compile``) before it runs, tests or builds the box;
this module reads the ``.mo`` files with the standard library's :mod:`gettext`.

Counts: a placeholder ``{count}`` in message ``K`` is worded by the plural message ``K.count`` when the
catalogue has one (``msgid_plural``, one form per CLDR plural category of the language: Russian 1 / 2-4 / 5,
English 1 / the rest), chosen by the catalogue's own ``Plural-Forms`` rule. The pages' scripts get the same
messages and the same rule (:func:`catalogue_json`, ``SVOYAK.word`` in ``web/static/js/svoyak.js``).

>>> word("count.themes", "ru", count=21), word("count.themes", "ru", count=12), word("count.themes", "en", count=1)
('21 тема', '12 тем', '1 theme')
>>> word("rooms.backlog", "ru", count=3)
'3 события ждут отправки'
>>> gettext("conn.online", "ru"), gettext("conn.online", "en"), gettext("no.such.key", "ru")
('на связи', 'online', 'no.such.key')
"""

from __future__ import annotations

import functools
import gettext as _gettext
import re
import string
from pathlib import Path

from appliance.errors import SvoyakError

LOCALE_DIR = Path(__file__).with_name("locale")
DOMAIN = "messages"
DEFAULT_LANGUAGE = "ru"
# The languages the box offers, Russian first; a third is a catalogue in LOCALE_DIR (tests add a pseudo-locale).
LANGUAGES: tuple[str, ...] = ("ru", "en")
_FIELD = re.compile(r"\{(\w+)\}")


class CatalogueMissing(SvoyakError):
    """A language's compiled catalogue (``.mo``) is absent: ``./dev words`` compiles it."""


def _mo_path(language: str, locale_dir: Path) -> Path:
    return locale_dir / language / "LC_MESSAGES" / f"{DOMAIN}.mo"


@functools.cache
def translations(language: str, locale_dir: Path | None = None) -> _gettext.GNUTranslations:
    """The compiled catalogue of ``language``; raises :class:`CatalogueMissing` (with the fix) if it is absent.
    (``./dev`` recompiles a ``.po`` newer than its ``.mo``; tests/test_words.py checks the two agree.)"""
    locale_dir = locale_dir or LOCALE_DIR
    mo = _mo_path(language, locale_dir)
    if not mo.exists():
        raise CatalogueMissing(f"no compiled catalogue {mo}: run ./dev words (pybabel compile -d {locale_dir})")
    with open(mo, "rb") as stream:
        return _gettext.GNUTranslations(stream)


def _catalogue(language: str) -> _gettext.GNUTranslations:
    return translations(language if language in LANGUAGES else DEFAULT_LANGUAGE, _locale_dir())


def _locale_dir() -> Path:
    return LOCALE_DIR


def has(key: str, language: str = DEFAULT_LANGUAGE) -> bool:
    """Whether the catalogue words ``key`` (a plain or a plural message)."""
    messages = _catalogue(language)._catalog  # noqa: SLF001 (GNUTranslations keeps its messages there)
    return key in messages or (key, 0) in messages


def gettext(key: str, language: str) -> str:
    """The message ``key`` in ``language``; a key the catalogue lacks reads as itself (a gap shows, not fatal)."""
    return _catalogue(language).gettext(key)


def ngettext(key: str, count: int, language: str) -> str:
    """The form of plural message ``key`` for ``count``, by the catalogue's ``Plural-Forms`` rule."""
    return _catalogue(language).ngettext(key, key, abs(int(count)))


def plural_index(count: int, language: str = DEFAULT_LANGUAGE) -> int:
    """Which form ``count`` takes in ``language``: the catalogue's rule (CLDR's categories, by Babel).

    >>> [plural_index(n) for n in (0, 1, 2, 4, 5, 11, 12, 14, 21, 22, 25, 101, 111, 112, 122)]
    [2, 0, 1, 1, 2, 2, 2, 2, 0, 1, 2, 0, 2, 2, 1]
    >>> plural_index(-1), plural_index(1, "en"), plural_index(0, "en"), plural_index(2, "en")
    (0, 0, 1, 1)
    """
    return _catalogue(language).plural(abs(int(count)))


def plural_expression(language: str) -> str:
    """The catalogue's ``Plural-Forms`` header (``nplurals=3; plural=(...);``): the pages run the same rule."""
    return _catalogue(language).info()["plural-forms"]


def counted(key: str, language: str) -> dict[str, str]:
    """The placeholders of message ``key`` worded by plural messages: ``{"count": "count.themes.count"}``."""
    text = gettext(key, language)
    return {name: f"{key}.{name}" for name in _FIELD.findall(text) if has(f"{key}.{name}", language)}


def word(key: str, language: str, /, **params) -> str:
    """Message ``key`` in ``language`` with ``params`` filled in, each counted placeholder ``{x}`` worded by the
    plural message ``key.x`` for ``params["x"]``. Raises ``KeyError`` for a placeholder ``params`` lacks (like
    ``str.format``).

    >>> word("tie.slots", "ru", slots=1, players=3), word("tie.slots", "en", slots=2, players=3)
    ('1 из 3 проходит', '2 of 3 go on')
    """
    text = gettext(key, language)
    if "{" not in text:
        return text
    for name, plural_key in counted(key, language).items():
        text = text.replace("{" + name + "}", ngettext(plural_key, params[name], language))
    return text.format_map(params)


def both(key: str, /, **params) -> dict[str, str]:
    """``{"ru": ..., "en": ...}``: a message worded in every language the box offers (refusals carry both)."""
    return {language: word(key, language, **params) for language in LANGUAGES}


def fields(key: str, language: str = DEFAULT_LANGUAGE) -> set[str]:
    """The placeholders message ``key`` names in ``language``, its counted ones' included."""
    texts = [gettext(key, language)] + [ngettext(plural_key, n, language)
                                        for plural_key in counted(key, language).values() for n in (1, 2, 5)]
    return {field for text in texts for _, field, _, _ in string.Formatter().parse(text) if field}


def keys(prefix: str = "", language: str = DEFAULT_LANGUAGE, plural: bool | None = None) -> list[str]:
    """Every message id of the catalogue starting with ``prefix``, sorted: the plain ones (``plural=False``),
    the plural ones (``True``, each once) or both (``None``)."""
    messages = _catalogue(language)._catalog  # noqa: SLF001
    ids = {key if isinstance(key, str) else key[0] for key in messages
           if plural is None or isinstance(key, tuple) == plural}
    return sorted(key for key in ids if key and key.startswith(prefix))


def pairs(prefix: str) -> dict[str, tuple[str, str]]:
    """The plain messages under ``prefix``, by the rest of their id, as (Russian, English) as written (counted
    placeholders unworded): for checks that read every line of one area (tests, docs)."""
    return {key.removeprefix(prefix): (gettext(key, "ru"), gettext(key, "en"))
            for key in keys(prefix, plural=False)}


# Messages only the box words (refusals reach the pages already worded, papers and CSV are made on the box): left
# out of what every page embeds, which stays the size it was before the catalogues (37 KB of 75 KB in Russian).
SERVER_ONLY = ("refusal.", "protocol.", "paper.", "csv.", "param.", "storage.", "package.")


def catalogue_json(language: str) -> dict:
    """What a page's scripts get: every message they may say (a plural one as its list of forms; not the
    :data:`SERVER_ONLY` ones) and the plural rule. Made once per language and catalogue (every page embeds it):
    not to be changed by the caller."""
    return _catalogue_json(language if language in LANGUAGES else DEFAULT_LANGUAGE, _locale_dir())


@functools.cache
def _catalogue_json(language: str, _locale: Path) -> dict:
    messages: dict[str, object] = {}
    catalogue = _catalogue(language)
    for key, text in catalogue._catalog.items():  # noqa: SLF001
        if isinstance(key, tuple):
            messages.setdefault(key[0], [])
            forms = messages[key[0]]
            forms.extend([""] * (key[1] + 1 - len(forms)))
            forms[key[1]] = text
        elif key:
            messages[key] = text
    messages = {key: text for key, text in messages.items() if not key.startswith(SERVER_ONLY)}
    return {"messages": messages, "plural": plural_expression(language)}


__all__ = ["LANGUAGES", "CatalogueMissing", "both", "catalogue_json", "counted", "fields", "gettext", "has",
           "keys", "ngettext", "pairs", "plural_expression", "plural_index", "word"]
