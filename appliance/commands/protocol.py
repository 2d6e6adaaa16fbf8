"""``svoyak protocol LOG --format csv|html``: the battle protocol from a battle log: per question who pressed
in what order with time gaps, who answered, the ruling, running scores, corrections. The HTML prints on A4
(landscape), Russian first."""

from __future__ import annotations

import sys


def add_arguments(parser) -> None:
    parser.add_argument("log", help="battle log in JSON Lines (docs/battle-log.md), - for standard input, or the "
                                    "box's SQLite event store (then --battle)")
    parser.add_argument("--battle", help="with an SQLite store: the battle id (default: the newest battle)")
    parser.add_argument("--format", choices=("csv", "html"), default="html", help="output format (default html)")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")


HEADERS = ("Тема / Theme", "Вопрос / Question", "Цена / Value", "Тип / Kind", "Нажатия (порядок, с) / Presses",
           "Ответы / Answers", "Итог / Outcome")
CORRECTIONS = "Исправления / Corrections"
SOURCE = "Источник вопроса / Question from"  # only when some theme came from a package or has texts


def _with_source(rows) -> bool:
    return any(row.source for row in rows)


def to_csv(state, rows) -> str:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out)
    source = _with_source(rows)
    writer.writerow(HEADERS + tuple(state.players) + (CORRECTIONS,) + ((SOURCE,) if source else ()))
    for row in rows:
        writer.writerow((f"{row.theme} {row.theme_name}".strip(), row.question, row.value_points, row.kind,
                         row.presses, row.answers, row.outcome, *row.scores, row.corrections)
                        + ((row.source,) if source else ()))
    return out.getvalue()


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
"""


def _themes_line(state) -> str:
    """« · темы / themes: 1 Реки, 2 Города (пакет / package 0123456789ab)»: the protocol names its themes."""
    names = [name for name in state.setup.theme_names if name]
    if not names:
        return ""
    packages = sorted({source[0] for source in getattr(state.setup, "sources", ()) if source})
    listed = ", ".join(f"{number} {name}" for number, name in enumerate(state.setup.theme_names, start=1) if name)
    return f" · {listed}" + (f" (пакет / package {', '.join(packages)})" if packages else "")


def to_html(state, rows, notes, title: str) -> str:
    from html import escape

    source = _with_source(rows)
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADERS + tuple(state.players) + (CORRECTIONS,)
                   + ((SOURCE,) if source else ()))
    body = []
    for row in rows:
        kind = "shootout" if row.question and "shoot" in row.kind else ("red" if "red" in row.kind else "")
        cells = [f"{row.theme} {escape(row.theme_name)}".strip(), str(row.question), str(row.value_points),
                 escape(row.kind), escape(row.presses), escape(row.answers), escape(row.outcome)]
        tds = "".join(f'<td class="num">{c}</td>' if i in (1, 2) else f"<td>{c}</td>" for i, c in enumerate(cells))
        tds += "".join(f'<td class="num">{score}</td>' for score in row.scores)
        tds += f"<td>{escape(row.corrections)}</td>"
        if source:
            tds += f"<td>{escape(row.source)}</td>"
        body.append(f'<tr class="{kind}">{tds}</tr>')
    items = "".join(f"<li>{escape(note)}</li>" for note in notes)
    meta = escape(f"{state.profile.title} · {', '.join(state.players)} · тем / themes: {state.setup.themes}"
                  + _themes_line(state))
    return (f'<!DOCTYPE html>\n<html lang="ru"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>Протокол боя / Battle protocol: {escape(title)}</h1>"
            f'<p class="meta">{meta}</p><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            f'</table><ul class="notes">{items}</ul></body></html>\n')


def run(args) -> int:
    from appliance.commands.replay import load_or_explain
    from appliance.rules.battle.protocol import protocol_notes, protocol_rows

    loaded = load_or_explain(args, "protocol")
    if loaded is None:
        return 1
    header, state = loaded
    rows = protocol_rows(state)
    title = header.get("battle_id") or state.setup.slot or "battle"
    text = to_csv(state, rows) if args.format == "csv" else to_html(state, rows, protocol_notes(state), title)
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0
