"""``svoyak capture``: run the buzzer capture service (the systemd unit's ExecStart).

``--simulator`` runs it on mock pins (no GPIO needed); ``--keyboard`` adds terminal buzzers (gpio/keyboard.py:
keys 1-4 or z x n m for players 1-4, r or space for the host reset button, t for button test, q to quit).
"""

from __future__ import annotations

from appliance import config
from appliance.errors import ConfigError


def add_arguments(parser) -> None:
    parser.add_argument("--simulator", action="store_true", help="run on mock pins (a laptop with no GPIO)")
    parser.add_argument("--keyboard", action="store_true",
                        help="simulator only: press buzzers from this terminal (1-4 or z x n m; r resets; q quits)")


def run(args) -> int:
    settings = config.load(overrides={"simulator": True} if args.simulator else None)
    if args.keyboard and settings.pin_factory != "mock":
        raise ConfigError("--keyboard needs the mock pin factory: add --simulator")
    from gpio.service import main

    return main(settings, keyboard=args.keyboard)
