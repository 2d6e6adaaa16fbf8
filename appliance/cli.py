"""The ``svoyak`` command: one entry point, one module per subcommand.

Each subcommand module offers ``add_arguments(parser)`` and ``run(args) -> int``. Command modules keep their
top-level imports light and import their layer inside ``run``, so ``svoyak replay`` never loads Flask and
``svoyak capture`` never loads the engine.
The CLI is a composition root: it may import any layer.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from appliance.errors import SvoyakError

# name -> (module, one line of help). Add a line here to add a subcommand.
COMMANDS: dict[str, tuple[str, str]] = {
    "config": ("appliance.commands.config", "print every setting with its default, unit and current value"),
    "replay": ("appliance.commands.replay", "replay a battle log and print the final state and standings as JSON"),
    "protocol": ("appliance.commands.protocol", "print a battle's protocol (CSV or A4 HTML) from its log"),
    "serve": ("appliance.commands.serve", "run the web server (gunicorn gthread): host page, scoreboard, phones"),
    "run": ("appliance.commands.run", "run the whole box here: capture (mock pins on a laptop) and web server"),
    "nats": ("appliance.commands.nats", "run the box's nats-server while its rooms role needs one (svoyak-nats.service)"),
    "rooms": ("appliance.commands.rooms", "start a hub and N stations on this machine: a multi-room day (simulator)"),
    "tournament": ("appliance.commands.tournament", "simulate a tournament of a preset; list and show presets"),
    "pin": ("appliance.commands.pin", "print the host PIN (a host who lost it; or hold the host button at the box)"),
    "firstboot": ("appliance.commands.firstboot", "make the box identity (hotspot, host PIN) and write the hotspot profile"),
    "capture": ("appliance.commands.capture", "run the buzzer capture service (pins, lockout, its Unix socket)"),
    "hwcheck": ("appliance.commands.hwcheck", "check buttons, LEDs, buzzer and press timing on the box"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svoyak", description="Buzzer box for sport «Своя игра».")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        subparser = subparsers.add_parser(name, help=help_text, description=help_text)
        subparser.set_defaults(_module=module_name)
        importlib.import_module(module_name).add_arguments(subparser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. Project errors print one clear line and exit 2; nothing else is caught."""
    args = build_parser().parse_args(argv)
    try:
        return importlib.import_module(args._module).run(args) or 0
    except SvoyakError as error:
        print(f"svoyak {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
