"""``svoyak hwcheck``: check the box's buttons, LEDs, buzzer and timing (stop the capture service first).

With ``--jumper`` (a wire from ``hwcheck_output_pin``, default GPIO25 / header pin 22, to player 1's button
terminal) it measures edge-to-timestamp, -decision and -LED times over many presses and prints them; without it,
it walks the host through every button, LED, the buzzer and the reset button. See gpio/hwcheck.py.
"""

from __future__ import annotations

from appliance import config


def add_arguments(parser) -> None:
    parser.add_argument("--jumper", action="store_true", help="measure timing through the jumper wire")
    parser.add_argument("--presses", type=int, default=200, help="presses to measure with --jumper (default 200)")
    parser.add_argument("--simulator", action="store_true", help="run on mock pins (a dry run without GPIO)")


def _ask(question: str) -> bool:
    return input(f"{question} [y/n] ").strip().lower() in {"y", "yes", "д", "да"}


def run(args) -> int:
    settings = config.load(overrides={"simulator": True} if args.simulator else None)
    if args.presses < 1:
        raise config.ConfigError("--presses must be at least 1")
    import warnings

    from appliance.errors import DegradedModeWarning
    from gpio.hwcheck import Rig, interactive_check, jumper_check
    from gpio.service import open_backend_for

    with warnings.catch_warnings():
        warnings.simplefilter("always", DegradedModeWarning)
        backend = open_backend_for(settings)
    for reason in backend.degraded:
        print(f"degraded: {reason}")
    try:
        rig = Rig(settings, backend)
    except BaseException:
        backend.close()
        raise
    try:
        if args.jumper:
            result = jumper_check(rig, presses=args.presses)
        elif settings.pin_factory == "mock":
            print("the walk-through needs real buttons; on mock pins use --jumper (or the tests)")
            return 2
        else:
            result = interactive_check(rig, say=print, ask=_ask)
    finally:
        rig.close()
        backend.close()
    return 0 if result["ok"] else 1
