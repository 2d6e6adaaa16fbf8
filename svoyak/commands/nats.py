"""``svoyak nats``: the box's nats-server, run while the rooms role needs one (``svoyak-nats.service``).

The web process writes ``data_dir/rooms/nats/nats.conf`` when the box becomes a hub or a paired station and
removes it when the box goes back to standalone (setting ``rooms_nats_unit``); this process follows the file.
"""

from __future__ import annotations


def add_arguments(parser) -> None:
    parser.add_argument("--poll-ms", type=int, default=1000, help="how often the configuration is looked at")


def run(args) -> int:
    import logging
    from pathlib import Path

    from appliance import config
    from appliance.service.rooms.server import supervise

    logging.basicConfig(level=logging.INFO, format="%(asctime)s nats %(levelname)s %(message)s")
    settings = config.load()
    supervise(Path(settings.data_dir) / "rooms" / "nats", settings.nats_server, poll_s=args.poll_ms / 1000)
    return 0
