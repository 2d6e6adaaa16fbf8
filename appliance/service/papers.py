"""The day's papers for a battle: its protocol as printable HTML (A4 landscape) and as CSV, with a title that
names the tournament, stage, battle, room, host and date (from the battle's setup), never a hex id.

One renderer for every way in: ``svoyak protocol`` (appliance/commands/protocol.py), the host's end-of-battle
screen and the director's battle card (web/papers.py). The rows themselves are the rules' own
(:mod:`appliance.rules.battle.protocol`): who pressed in what order with time gaps, who answered, the ruling,
the running scores, and any correction.
"""

from __future__ import annotations

import io
from html import escape

import appliance.words as words
from appliance.rules.battle.protocol import package_name, protocol_notes, protocol_rows
from appliance.store import csv_cells

# A paper speaks one language, the one its screen was in (a Russian page never shows English): the catalogue's
# ``paper.*`` messages (appliance/locale).
HEADERS = ("theme", "question", "value", "kind", "presses", "answers", "outcome")


def _headers(language: str) -> tuple[str, ...]:
    return tuple(words.gettext(f"paper.header.{name}", language) for name in HEADERS)

CSS = """
@page { size: A4 landscape; margin: 12mm 10mm; }
body { font-family: "DejaVu Sans", sans-serif; font-size: 9pt; color: #000; margin: 0; }
h1 { font-size: 13pt; margin: 0 0 2mm; } p.meta { margin: 0 0 3mm; font-size: 9pt; }
table { border-collapse: collapse; width: 100%; page-break-inside: auto; }
thead { display: table-header-group; } tr { page-break-inside: avoid; }
th, td { border: 0.3mm solid #555; padding: 0.8mm 1.2mm; vertical-align: top; text-align: left; }
th { background: #eee; font-weight: bold; } td.num { text-align: right; white-space: nowrap; }
tr.shootout td { background: #f4f4f4; } tr.red td:first-child { border-left: 1mm solid #b00; }
ul.notes { margin: 3mm 0 0; padding-left: 5mm; }
@media screen { body { margin: 12px; } }
"""


def _date(iso: str, language: str = "ru") -> str:
    """``2026-12-01`` as a Russian reader writes it: ``01.12.2026`` (anything else, or English, as given)."""
    parts = iso.split("-")
    if language != "en" and len(parts) == 3 and all(part.isdigit() for part in parts):
        return f"{parts[2]}.{parts[1]}.{parts[0]}"
    return iso


def title(state, battle_id: str = "", language: str = "ru") -> str:
    """The protocol's title from the battle's setup: «Кубок · 1/27 финала · бой 3 · зал 2 · ведущий: Ирина ·
    01.12.2026». A battle set up with none of these is named by its players (the id only when it has none)."""
    setup = state.setup
    parts = [setup.tournament, setup.stage, setup.battle_name]
    parts = [part.strip() for part in parts if part and part.strip()]
    if setup.room.strip():
        parts.append(words.word("paper.room", language, room=setup.room.strip()))
    if setup.host.strip():
        parts.append(words.word("paper.host", language, host=setup.host.strip()))
    if not (setup.tournament or setup.stage or setup.battle_name):
        parts.insert(0, " — ".join(state.players) or battle_id or words.gettext("paper.battle", language))
    if setup.date:
        parts.append(_date(setup.date, language))
    return " · ".join(parts)


def summary(state, battle_id: str = "", language: str = "ru") -> dict:
    """A battle in a line, for a screen that must not lose it: ``{"id", "title", "finished", "questions",
    "players": [{"name", "score"}]}``."""
    return {"id": battle_id, "title": title(state, battle_id, language), "finished": state.is_over,
            # played means over: «сыграно вопросов: 1» is not said while question 1 is still being answered
            "questions": sum(1 for question in state.questions if question.is_over),
            "players": [{"name": name, "score": score} for name, score in zip(state.players, state.scores)]}


def file_name(state, battle_id: str, extension: str) -> str:
    """A download's file name: ASCII (any browser keeps it), made of the date and the battle's id."""
    stem = "-".join(part for part in ("protocol", state.setup.date, battle_id) if part)
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "_" for ch in stem)
    return f"{safe}.{extension}"


def themes_line(state, language: str = "ru", titles: dict | None = None) -> str:
    """«1 Реки, 2 Города; запасная: 5 Моря (пакет «Кубок двора»)»: the protocol names the battle's themes, its
    spare ones apart (they are not among its «4 темы»), and the package they came from by its title (``titles``:
    package id -> title; an id only for a package no longer on the box); ``""`` when no theme was named."""
    setup = state.setup
    if not any(setup.theme_names):
        return ""
    packages = sorted({source[0] for source in setup.sources if source})
    numbered = list(enumerate(setup.theme_names, start=1))
    listed = ", ".join(f"{number} {name}" for number, name in numbered[:setup.themes] if name)
    spare = [f"{number} {name}" for number, name in numbered[setup.themes:] if name]
    if spare:
        listed += "; " + words.word("paper.spares", language, count=len(spare)) + " " + ", ".join(spare)
    package = words.word("paper.package", language,
                         packages=", ".join(package_name(package_id, titles) for package_id in packages))
    return listed + (f" ({package})" if packages else "")


def protocol_csv(state, language: str = "ru", titles: dict | None = None) -> str:
    """The protocol as CSV: a row per question asked, running scores per player, corrections, then (when some
    theme came from a package or was set up with its texts) where each question was read from; headers and
    words in ``language``."""
    out = io.StringIO()
    writer = csv_cells.writer(out)  # a player named "=HYPERLINK(...)" stays text in a spreadsheet
    rows = protocol_rows(state, language, titles)
    source = any(row.source for row in rows)
    writer.writerow(_headers(language) + tuple(state.players) + (words.gettext("paper.corrections", language),)
                    + ((words.gettext("paper.source", language),) if source else ()))
    for row in rows:
        writer.writerow((f"{row.theme} {row.theme_name}".strip(), row.question, row.value_points, row.kind,
                         row.presses, row.answers, row.outcome, *row.scores, row.corrections)
                        + ((row.source,) if source else ()))
    return out.getvalue()


def protocol_html(state, battle_id: str = "", heading: str | None = None, language: str = "ru",
                  titles: dict | None = None) -> str:
    """The protocol as a printable page (A4 landscape) in ``language``; ``heading`` defaults to :func:`title`;
    ``titles`` (package id -> title) names the packages its themes came from."""
    heading = title(state, battle_id, language) if heading is None else heading
    rows = protocol_rows(state, language, titles)
    source = any(row.source for row in rows)
    head = "".join(f"<th>{escape(h)}</th>"
                   for h in _headers(language) + tuple(state.players) + (words.gettext("paper.corrections", language),)
                   + ((words.gettext("paper.source", language),) if source else ()))
    body = []
    questions = state.questions
    for row, question in zip(rows, questions):
        kind = "shootout" if question.shootout else ("red" if question.red else "")
        cells = [f"{row.theme} {escape(row.theme_name)}".strip(), str(row.question), str(row.value_points),
                 escape(row.kind), escape(row.presses), escape(row.answers), escape(row.outcome)]
        tds = "".join(f'<td class="num">{c}</td>' if i in (1, 2) else f"<td>{c}</td>" for i, c in enumerate(cells))
        tds += "".join(f'<td class="num">{score}</td>' for score in row.scores)
        tds += f"<td>{escape(row.corrections)}</td>"
        if source:
            tds += f"<td>{escape(row.source)}</td>"
        body.append(f'<tr class="{kind}">{tds}</tr>')
    items = "".join(f"<li>{escape(note)}</li>" for note in protocol_notes(state, language))
    themes = words.word("paper.themes", language, count=state.setup.themes)
    title_ru, _, title_en = state.profile.title.partition(" / ")  # a profile's title is "русский / English"
    named = themes_line(state, language, titles)
    meta = escape(f"{(title_en or title_ru) if language == 'en' else title_ru} · {', '.join(state.players)} · {themes}"
                  + (f": {named}" if named else ""))
    lang = "en" if language == "en" else "ru"
    return (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{escape(heading)}</title>'
            f"<style>{CSS}</style></head><body><h1>{escape(words.word('paper.heading', language, title=heading))}</h1>"
            f'<p class="meta">{meta}</p><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            f'</table><ul class="notes">{items}</ul></body></html>\n')
