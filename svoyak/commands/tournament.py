"""``svoyak tournament``: simulate a whole tournament of a preset, or list and show the presets.

``svoyak tournament simulate --preset eurocup --players 100 --seed 7`` plays every stage through the tournament
engine and the battle engine with random but rule-abiding results and prints the stages and final standings as
JSON; the same arguments print the same JSON.
"""

from __future__ import annotations

import json
import sys

MAX_PLAYERS = 10_000  # a simulated field (the largest real tournaments have a few hundred entrants)
MAX_ROOMS = 1_000


def add_arguments(parser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    simulate = actions.add_parser("simulate", help="play a whole tournament with random results; print JSON")
    simulate.add_argument("--preset", required=True, help="preset name (eurocup, irkutsk, ...) or a .toml path")
    simulate.add_argument("--players", type=int, required=True, help="number of entrants")
    simulate.add_argument("--seed", type=int, default=0, help="the random seed (recorded in the output)")
    simulate.add_argument("--rooms", type=int, default=3,
                          help="rooms to deal battles to where the format names none (default 3)")
    simulate.add_argument("--outline", action="store_true",
                          help="play battles with the built-in outline instead of the battle engine")
    simulate.add_argument("--events", action="store_true", help="also print the tournament's event log")
    simulate.add_argument("--set", action="append", default=[], metavar="STAGE.FIELD=VALUE",
                          help="change a format field the organisers decide, e.g. --set swiss.rounds=7")
    actions.add_parser("presets", help="list the shipped tournament presets")
    show = actions.add_parser("show", help="print a preset's TOML (copy it to make a new format)")
    show.add_argument("preset")


def run(args) -> int:
    from appliance.rules.tournament import FormatError, events, simulate
    from appliance.rules.tournament.errors import UnknownFormatError
    from appliance.service import presets
    from appliance.service.tournament_view import report
    from svoyak.commands.replay import check_input

    if args.action == "presets":
        for name in presets.list_formats():
            fmt = presets.load_format(name)
            print(f"{name:14} {fmt.title_ru} / {fmt.title_en}: "
                  f"{' -> '.join(stage.id for stage in fmt.stages)}")
        return 0
    if args.action == "show":
        if args.preset not in presets.list_formats():
            raise UnknownFormatError(f"no tournament preset {args.preset[:100]!r}; presets: "
                                     f"{', '.join(presets.list_formats())} (show takes a preset's name)")

        presets.load_format(args.preset)  # the error names the presets if unknown
        print((presets.FORMATS_DIR / f"{args.preset}.toml").read_text(encoding="utf-8"), end="")
        return 0
    if not 1 <= args.players <= MAX_PLAYERS:
        raise FormatError(f"--players must be 1 to {MAX_PLAYERS}, not {args.players}")
    if not 1 <= args.rooms <= MAX_ROOMS:
        raise FormatError(f"--rooms must be 1 to {MAX_ROOMS}, not {args.rooms}")
    if args.preset.endswith(".toml") or "/" in args.preset:
        check_input(args.preset)  # not a directory, device or FIFO: load_format would read it forever
    player = simulate.play_battle_outline if args.outline else None
    changes = {}
    for item in args.set:
        key, equals, value = item.partition("=")
        if not equals or "." not in key or not value.strip():
            raise FormatError(f"--set {item[:100]!r}: write STAGE.FIELD=VALUE, e.g. --set swiss.rounds=7")
        number = value.strip()
        if number.lstrip("-").isdigit() and len(number) > 18:
            raise FormatError(f"--set {key.strip()}: the number has more than 18 digits")
        changes[key.strip()] = int(number) if number.lstrip("-").isdigit() else number
    log, state = presets.simulate(args.preset, args.players, args.seed, rooms=max(1, args.rooms),
                                  battle_player=player, changes=changes)
    data = report(state)
    data["battle_engine"] = simulate.engine_used(args.outline)
    if args.events:
        data["events"] = [events.to_dict(event) for event in log]
    json.dump(data, sys.stdout, ensure_ascii=False, indent=1, sort_keys=False)
    print()
    return 0
