"""The word catalogues (appliance/locale, docs/words.md): gettext .po files, every message in Russian and English,
none unused, none missing, the compiled .mo in step with its .po, the plural rule CLDR's, and a third language
that is only one more .po file (a pseudo-locale built here from the catalogue renders the pages).

The Russian of each message is read by tests/web/test_strings.py (no Latin words, no guessed genders)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from babel.messages import mofile, plurals
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

import appliance.words as words

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "appliance" / "locale"
KEY = re.compile(r"^[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+$")
def catalogue(language: str) -> Catalog:
    with open(LOCALE / language / "LC_MESSAGES" / "messages.po", "rb") as stream:
        return read_po(stream, locale=language)


def ids(cat: Catalog) -> set[str]:
    return {message.id if isinstance(message.id, str) else message.id[0] for message in cat if message.id}


def test_every_message_has_russian_and_english_and_the_same_placeholders():
    """Russian and English (and any other catalogue in appliance/locale): the same ids, every text written."""
    languages = sorted(po.parent.parent.name for po in LOCALE.glob("*/LC_MESSAGES/messages.po"))
    assert {"ru", "en"} <= set(languages)
    ru = catalogue("ru")
    for language in languages:
        other = ids(catalogue(language))
        assert other == ids(ru), (language, sorted(ids(ru) - other), sorted(other - ids(ru)))
    for cat in map(catalogue, languages):
        for message in cat:
            if not message.id:
                continue
            forms = message.string if isinstance(message.string, tuple) else (message.string,)
            assert all(forms) and len(forms) == (cat.num_plurals if message.pluralizable else 1), \
                (cat.locale, message.id)
    for key in words.keys(plural=False):
        assert words.fields(key, "ru") == words.fields(key, "en"), key


def test_a_message_id_is_declared_once():
    for language in words.LANGUAGES:
        text = (LOCALE / language / "LC_MESSAGES" / "messages.po").read_text(encoding="utf-8")
        declared = re.findall(r'^msgid "(.+)"$', text, flags=re.M)
        assert len(declared) == len(set(declared)), language


def test_the_compiled_catalogues_are_their_po_files():
    """``./dev`` compiles a .po newer than its .mo; a stale .mo would speak yesterday's words."""
    import gettext

    for language in words.LANGUAGES:
        compiled = io.BytesIO()
        mofile.write_mo(compiled, catalogue(language))
        compiled.seek(0)
        fresh = gettext.GNUTranslations(compiled)._catalog
        on_disk = words.translations(language, LOCALE)._catalog
        assert fresh == on_disk, f"{language}: run ./dev words"


@pytest.mark.parametrize("language", words.LANGUAGES)
def test_the_plural_rule_is_cldrs(language):
    header = words.plural_expression(language)
    rule = plurals.get_plural(language)
    assert header == f"nplurals={rule.num_plurals}; plural={rule.plural_expr};"


def source_literals() -> str:
    """Every string literal of the code, templates and scripts (the catalogue's own folder left out)."""
    text = []
    for folder in ("appliance", "web", "gpio"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".html", ".js") and "locale" not in path.parts:
                text.append(path.read_text(encoding="utf-8"))
    return "\n".join(text)


def used(key: str, literals: set[str], prefixes: set[str]) -> bool:
    parent = key.rsplit(".", 1)[0]
    if words.has(key) and words.keys(key, plural=True) == [key] and words.has(parent) and \
            key.rsplit(".", 1)[1] in words.fields(parent, "ru") | words.fields(parent, "en"):
        return used(parent, literals, prefixes)  # a counted placeholder's plural message: used with its line
    return key in literals or any(key.startswith(prefix) for prefix in prefixes)


def test_no_message_is_unused():
    """Each message id is a literal of the code, or begins with a literal the code completes at run time
    (``"conn." + state``, ``f"refusal.battle.{code}"``: the areas' own tests check those families' members)."""
    found = re.findall(r"""(?<=["'`])([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)*\.?)(["'`{])""", source_literals())
    literals = {literal for literal, _ in found}
    prefixes = {literal for literal, after in found if after == "{" or literal.endswith(".")}
    unused = sorted(key for key in words.keys() if not used(key, literals, prefixes))
    assert unused == []


def test_the_check_finds_an_unused_message():
    assert not used("nobody.says.this", {"somebody.says.that"}, {"other."})
    assert used("refusal.battle.nothing_to_undo", set(), {"refusal.battle."})


def test_every_message_the_code_names_is_in_the_catalogue():
    """What ``pybabel extract -F babel.cfg`` finds (Python, templates, scripts): each literal id is worded."""
    with open(ROOT / "babel.cfg", encoding="utf-8") as stream:
        method_map, options_map = parse_mapping_cfg(stream)
    keywords = {name: None for name in ("word", "t", "tn", "both", "gettext", "ngettext", "has")}
    named = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(str(ROOT), method_map, options_map,
                                                                             keywords=keywords):
        message = message if isinstance(message, str) else message[0]
        if message and KEY.match(message):
            named.setdefault(message, f"{filename}:{lineno}")
    assert len(named) > 300
    assert {key: where for key, where in named.items() if not words.has(key)} == {}


# ----------------------------------------------------------------------------------------- a third language
PSEUDO_PLURAL = "nplurals=4; plural=(n%100==1 ? 0 : n%100==2 ? 1 : n%100==3 || n%100==4 ? 2 : 3);"


def pseudo(text: str) -> str:
    """English in ⟦…⟧, its placeholders kept: a line shows it came from the pseudo-locale's catalogue."""
    return "⟦" + text + "⟧"


@pytest.fixture()
def pseudo_locale(tmp_path, monkeypatch):
    """A catalogue for language ``xx`` made from the English one, with a plural rule of four forms; the box's
    Russian and English compiled beside it. Nothing in the code names ``xx``."""
    english = catalogue("en")
    xx = Catalog(locale="en", project="svoyak")  # a locale Babel knows, for the header; its rule is replaced
    xx._num_plurals, xx._plural_expr = 4, PSEUDO_PLURAL.split("plural=")[1].rstrip(";")
    for message in english:
        if not message.id:
            continue
        if message.pluralizable:
            forms = tuple(pseudo(message.string[min(i, 1)]) + f"[{i}]" for i in range(4))
            xx.add(message.id, forms, flags=message.flags)
        else:
            xx.add(message.id, pseudo(message.string), flags=message.flags)
    for language in ("ru", "en"):
        (tmp_path / language / "LC_MESSAGES").mkdir(parents=True)
        (tmp_path / language / "LC_MESSAGES" / "messages.mo").write_bytes(
            (LOCALE / language / "LC_MESSAGES" / "messages.mo").read_bytes())
    (tmp_path / "xx" / "LC_MESSAGES").mkdir(parents=True)
    with open(tmp_path / "xx" / "LC_MESSAGES" / "messages.mo", "wb") as stream:
        mofile.write_mo(stream, xx)
    monkeypatch.setattr(words, "LOCALE_DIR", tmp_path)
    monkeypatch.setattr(words, "LANGUAGES", ("ru", "en", "xx"))
    words.translations.cache_clear()
    yield "xx"
    words.translations.cache_clear()
    words._catalogue_json.cache_clear()


def test_a_third_language_is_one_more_catalogue(pseudo_locale):
    # the line ⟦{count}⟧, its {count} worded by the plural message's form for the count
    assert words.word("count.themes", "xx", count=1) == "⟦⟦1 theme⟧[0]⟧"
    assert words.word("count.themes", "xx", count=3) == "⟦⟦3 themes⟧[2]⟧"
    assert words.word("count.themes", "xx", count=102) == "⟦⟦102 themes⟧[1]⟧"
    assert words.plural_expression("xx") == PSEUDO_PLURAL
    assert words.both("conn.online") == {"ru": "на связи", "en": "online", "xx": "⟦online⟧"}
    said = words.catalogue_json("xx")
    assert said["plural"] == PSEUDO_PLURAL and len(said["messages"]["count.themes.count"]) == 4


def test_the_pages_speak_the_pseudo_locale(pseudo_locale, settings, memory_battles):
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.session import Session
    from tests.web.conftest import IDENTITY
    from web import create_app
    from web.sync import Services

    session = Session(memory_battles, BattleAdapter(), simulator=True).start(timer_thread=False)
    client = create_app(settings, Services(session=session, identity=IDENTITY)).test_client()
    box = {"Host": "10.42.0.1"}
    for path in ("/", "/host", "/board", "/watch", "/play", "/sim", "/director/login", "/packages/login"):
        page = client.get(f"{path}?lang=xx", headers=box).get_data(as_text=True)
        visible = re.sub(r"<script[^>]*>.*?</script>|<[^>]+>", " ", page, flags=re.S)
        assert "⟦" in visible, path
        assert not re.search(r"[А-Яа-яЁё]", visible.replace("Русский", "")), (path, visible[:600])  # the switch
    # a refusal's page says it in the page's language first, then in Russian and English as always
    refused = client.get("/no-such-page?lang=xx", headers=box).get_data(as_text=True)
    assert refused.index("⟦No such page⟧") < refused.index("Такой страницы нет") < refused.index(">No such page<")
    config = client.get("/board?lang=xx", headers=box).get_data(as_text=True)
    assert PSEUDO_PLURAL in config  # the scripts get the pseudo-locale's own plural rule


def test_a_message_is_added_in_one_line_with_its_counts(tmp_path, monkeypatch):
    """``./dev words add KEY RU EN`` (appliance/wordbook.py): how another slice's new line joins the catalogues,
    its count written the old inline way."""
    import shutil

    from appliance import wordbook

    for language in ("ru", "en"):
        (tmp_path / language / "LC_MESSAGES").mkdir(parents=True)
        shutil.copy(LOCALE / language / "LC_MESSAGES" / "messages.po", tmp_path / language / "LC_MESSAGES")
    monkeypatch.setattr(wordbook, "LOCALE_DIR", tmp_path)
    added = wordbook.add([("test.left", "Осталось {n} {n:бой|боя|боёв} из {total}", "{n} of {total} {n:battle|battles} left")])
    assert added == ["test.left", "test.left.n"]
    with pytest.raises(ValueError):
        wordbook.add([("test.left", "снова", "again")])
    for language in ("ru", "en"):
        with open(tmp_path / language / "LC_MESSAGES" / "messages.po", "rb") as stream:
            compiled = read_po(stream, locale=language)
        with open(tmp_path / language / "LC_MESSAGES" / "messages.mo", "wb") as stream:
            mofile.write_mo(stream, compiled)
    monkeypatch.setattr(words, "LOCALE_DIR", tmp_path)
    words.translations.cache_clear()
    try:
        assert words.word("test.left", "ru", n=2, total=5) == "Осталось 2 боя из 5"
        assert words.word("test.left", "ru", n=5, total=5) == "Осталось 5 боёв из 5"
        assert words.word("test.left", "en", n=1, total=5) == "1 of 5 battle left"
        assert words.word("conn.online", "ru") == "на связи"  # the rest kept as it was
    finally:
        words.translations.cache_clear()
