"""``svoyak protocol LOG --format csv|html``: the battle protocol from a battle log: per question who pressed
in what order with time gaps, who answered, the ruling, running scores, corrections. The HTML prints on A4
(landscape), in Russian (``--lang en``: English); the renderer is :mod:`appliance.service.papers` (the screens use it too)."""

from __future__ import annotations

import sys


def add_arguments(parser) -> None:
    parser.add_argument("log", help="battle log in JSON Lines (docs/battle-log.md), - for standard input, or the "
                                    "box's SQLite event store (then --battle)")
    parser.add_argument("--battle", help="with an SQLite store: the battle id (default: the newest battle)")
    parser.add_argument("--format", choices=("csv", "html"), default="html", help="output format (default html)")
    parser.add_argument("--lang", choices=("ru", "en"), default="ru", help="the paper's language (default ru)")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")


def run(args) -> int:
    from svoyak.commands.replay import load_or_explain
    from appliance.service.papers import protocol_csv, protocol_html

    loaded = load_or_explain(args, "protocol")
    if loaded is None:
        return 1
    header, state = loaded
    battle_id = header.get("battle_id") or state.setup.slot or ""
    language = getattr(args, "lang", "ru")
    text = protocol_csv(state, language) if args.format == "csv" else protocol_html(state, battle_id, language=language)
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0
