"""``svoyak spectators``: the spectators' nats-server (``svoyak-spectators.service``; ``svoyak run`` starts it).

Writes its configuration and a new publisher secret under ``data_dir/spectators`` and becomes nats-server, so
systemd (or ``svoyak run``) stops and restarts the server itself. Setting ``spectators`` off: exits at once.
"""

from __future__ import annotations


def add_arguments(parser) -> None:
    pass


def run(args) -> int:
    import os

    from appliance import config
    from appliance.service.spectators.server import prepare

    settings = config.load()
    if not settings.spectators:
        print("svoyak spectators: the setting spectators is off: no fan-out, /watch uses Socket.IO", flush=True)
        return 0
    command = prepare(settings)
    os.execv(command[0], command)
    return 0  # pragma: no cover - execv does not return
