"""``svoyak pin``: print the box's host PIN, for a host who lost it (at the box's console; the identity file is
readable by the box's own user only, so ``sudo -u svoyak svoyak pin`` or root). At the box without a console:
hold the host button for ``reset_hold_ms`` and the HDMI board shows it for ``pin_shown_ms``."""

from __future__ import annotations


def add_arguments(parser) -> None:
    parser.add_argument("--bare", action="store_true", help="print the PIN alone (for scripts)")


def run(args) -> int:
    from appliance import config
    from appliance.service.identity import load_or_create

    identity = load_or_create(config.load())
    print(identity.host_pin if args.bare else f"host PIN of box {identity.box_name}: {identity.host_pin}")
    return 0
