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
    "config": ("svoyak.commands.config", "print every setting with its default, unit and current value"),
    "replay": ("svoyak.commands.replay", "replay a battle log and print the final state and standings as JSON"),
    "protocol": ("svoyak.commands.protocol", "print a battle's protocol (CSV or A4 HTML) from its log"),
    "serve": ("svoyak.commands.serve", "run the web server (gunicorn gthread): host page, scoreboard, phones"),
    "run": ("svoyak.commands.run", "run the whole box here: capture (mock pins on a laptop) and web server"),
    "nats": ("svoyak.commands.nats", "run the box's nats-server while its rooms role needs one (svoyak-nats.service)"),
    "spectators": ("svoyak.commands.spectators",
                   "run the spectators' nats-server: /watch phones and online viewers (svoyak-spectators.service)"),
    "rooms": ("svoyak.commands.rooms", "start a hub and N stations on this machine: a multi-room day (simulator)"),
    "tournament": ("svoyak.commands.tournament", "simulate a tournament of a preset; list and show presets"),
    "pin": ("svoyak.commands.pin", "print the host PIN (a host who lost it; or hold the host button at the box)"),
    "firstboot": ("svoyak.commands.firstboot", "make the box identity (hotspot, host PIN) and write the hotspot profile"),
    "capture": ("svoyak.commands.capture", "run the buzzer capture service (pins, lockout, its Unix socket)"),
    "hwcheck": ("svoyak.commands.hwcheck", "check buttons, LEDs, buzzer and press timing on the box"),
}


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``svoyak replay: the following arguments are required: log``)."""

    def error(self, message: str):
        message = message if len(message) <= 300 else message[:297] + "..."  # it may quote a 5,000-digit argument
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="svoyak", description="Buzzer box for sport «Своя игра».")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for name, (module_name, help_text) in COMMANDS.items():
        subparser = subparsers.add_parser(name, help=help_text, description=help_text)
        subparser.set_defaults(_module=module_name)
        importlib.import_module(module_name).add_arguments(subparser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. An error the input caused prints one clear line and exits 2: the project's errors, and
    at this process edge the ones a file or a stream gives (cannot open, not UTF-8, nested too deep, too large).
    Anything else is a bug and keeps its traceback."""
    args = build_parser().parse_args(argv)
    try:
        return importlib.import_module(args._module).run(args) or 0
    except SvoyakError as error:
        return _say(args.command, str(error))
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        return _say(args.command, f"{where}{error.strerror or error}")
    except UnicodeDecodeError as error:
        return _say(args.command, f"the input is not UTF-8 text (byte 0x{error.object[error.start]:02x} at "
                                  f"offset {error.start} of a read)")
    except RecursionError:
        return _say(args.command, "the input is nested too deeply to read")
    except MemoryError:
        return _say(args.command, "the input is too large to read")
    except KeyboardInterrupt:
        return 130


def _say(command: str, message: str) -> int:
    """One line on stderr, at most 500 characters (an error may quote a huge input); exit status 2."""
    line = " ".join(message.split())
    print(f"svoyak {command}: {line if len(line) <= 480 else line[:477] + '...'}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
