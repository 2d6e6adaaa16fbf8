"""Editing the word catalogues from the command line (docs/words.md), run by ``./dev words``:

    ./dev words add KEY "Русская строка" "English line"      one message, in Russian and English
    ./dev words fold web/host.py STRINGS [PREFIX]            every (ru, en) pair of a module's dict, then remove it

A line may count in the old inline way, ``{count} {count:тема|темы|тем}`` (Russian: the forms for 1, 2-4 and 5;
English: for 1 and the rest): the count becomes a plural message ``KEY.count`` of the catalogues, as
:mod:`appliance.words` reads them. Another language's catalogue gets the message untranslated (empty), so its
translator sees it; the catalogues are compiled afterwards (``pybabel compile``). Babel is needed here only.

>>> split_counts("{count} {count:тема|темы|тем} в пакете", 3)
('{count} в пакете', {'count': ['{count} тема', '{count} темы', '{count} тем']})
>>> split_counts("{slots} из {players} {slots:проходит|проходят}", 2)
('{slots}', {'slots': ['{slots} из {players} проходит', '{slots} из {players} проходят']})
>>> split_counts("Нет такого игрока", 3)
('Нет такого игрока', {})
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
from pathlib import Path

FORMS = re.compile(r"\{(\w+):([^{}|]*(?:\|[^{}|]*)+)\}")
LOCALE_DIR = Path(__file__).with_name("locale")
SOURCE_LANGUAGES = ("ru", "en")


def _form(forms: str, index: int) -> str:
    words = forms.split("|")
    return words[min(index, len(words) - 1)]


def split_counts(text: str, nplurals: int) -> tuple[str, dict[str, list[str]]]:
    """A line with inline forms as the catalogue keeps it: the line with ``{x}`` where a count and its word
    stood, and each count's plural forms. A figure next to its word (``{n} {n:a|b|c}``) becomes ``{n}``; forms
    apart from their figure make the whole line the plural message (only one count may do that)."""
    plural: dict[str, list[str]] = {}
    for name in dict.fromkeys(match.group(1) for match in FORMS.finditer(text)):
        pattern = re.compile(r"\{%s\} \{%s:([^{}]*)\}" % (name, name))
        match = pattern.search(text)
        if match and text.count("{" + name + "}") == 1:
            plural[name] = ["{%s} %s" % (name, _form(match.group(1), i)) for i in range(nplurals)]
            text = pattern.sub("{" + name + "}", text)
    left = list(dict.fromkeys(match.group(1) for match in FORMS.finditer(text)))
    if len(left) > 1:
        raise ValueError(f"{text!r}: only one count may have its word apart from its figure; split the line")
    if left:
        name = left[0]
        plural[name] = [FORMS.sub(lambda m, i=i: _form(m.group(2), i), text) for i in range(nplurals)]
        text = "{" + name + "}"
    return text, plural


def _catalogues():
    from babel.messages.pofile import read_po

    for po in sorted(LOCALE_DIR.glob("*/LC_MESSAGES/messages.po")):
        language = po.parent.parent.name
        with open(po, "rb") as stream:
            yield language, po, read_po(stream, locale=language)


def add(entries: list[tuple[str, str, str]], where: str = "") -> list[str]:
    """Add each ``(key, russian, english)`` to every catalogue; returns the ids added (the counts' too).
    Refuses a key a catalogue has already (a key has one home)."""
    from babel.messages.pofile import write_po

    added: list[str] = []
    for key, ru, en in entries:
        names = dict.fromkeys(split_counts(ru, 3)[1]) | dict.fromkeys(split_counts(en, 2)[1])
        added += [key] + [f"{key}.{name}" for name in names]
    for language, po, catalogue in _catalogues():
        for key, ru, en in entries:
            if key in catalogue:
                raise ValueError(f"{key!r} is in {po} already")
            source = {"ru": ru, "en": en}.get(language)
            text, plural = split_counts(source, catalogue.num_plurals) if source is not None else ("", {})
            flags = ["python-brace-format"] if "{" in ru + en else []
            locations = [(where, None)] if where else []
            catalogue.add(key, text, locations=locations, flags=flags)
            # the counts: the same names in every language (the Russian line's and the English line's)
            names = dict.fromkeys(split_counts(ru, 3)[1]) | dict.fromkeys(split_counts(en, 2)[1])
            for name in names:
                forms = tuple(plural.get(name, ["{" + name + "}"] * catalogue.num_plurals)) if source is not None \
                    else ("",) * catalogue.num_plurals
                catalogue.add((f"{key}.{name}", f"{key}.{name}"), forms, locations=locations, flags=flags)
        with open(po, "wb") as stream:
            write_po(stream, catalogue, width=120, include_previous=False)
    return added


def fold(path: str, name: str, prefix: str = "") -> list[str]:
    """Move the dict ``name`` of ``(ru, en)`` pairs out of module file ``path`` into the catalogues (each key
    ``prefix + key``) and delete it from the file. The code that read the dict is changed by hand to
    ``words.word(key, language, ...)``."""
    file = Path(path)
    module = importlib.import_module(".".join(file.with_suffix("").parts))
    pairs = getattr(module, name)
    added = add([(prefix + key, ru, en) for key, (ru, en) in pairs.items()], where=str(file))
    source = file.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            del lines[node.lineno - 1:node.end_lineno]
            break
    file.write_text("".join(lines), encoding="utf-8")
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev words", description="add messages to the word catalogues")
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("add", help="one message: KEY RUSSIAN ENGLISH")
    one.add_argument("key")
    one.add_argument("ru")
    one.add_argument("en")
    many = commands.add_parser("fold", help="a module's dict of (ru, en) pairs: FILE NAME [PREFIX]")
    many.add_argument("file")
    many.add_argument("name")
    many.add_argument("prefix", nargs="?", default="")
    args = parser.parse_args(argv)
    try:
        added = add([(args.key, args.ru, args.en)]) if args.command == "add" else \
            fold(args.file, args.name, args.prefix)
    except (ValueError, KeyError, AttributeError, ImportError) as error:
        print(f"words: {error}", file=sys.stderr)
        return 1
    print("\n".join(added))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
