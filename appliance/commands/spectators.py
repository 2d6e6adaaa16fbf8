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
    from appliance.service.spectators.server import cores, prepare

    settings = config.load()
    if not settings.spectators:
        print("svoyak spectators: the setting spectators is off: no fan-out, /watch uses Socket.IO", flush=True)
        return 0
    command = prepare(settings)
    # The fan-out keeps off the game's CPU (docs/spectators.md, "Where the time goes"): its own cores where there
    # are enough (setting spectators_cpus), and below the game's priority (spectators_nice).
    try:
        os.sched_setaffinity(0, cores(settings.spectators_cpus, os.sched_getaffinity(0)))
        os.nice(settings.spectators_nice)
    except OSError as error:  # a sandbox that forbids the calls: the hall is still served, beside the game
        print(f"svoyak spectators: the fan-out runs on every core at the game's priority ({error})", flush=True)
    os.execv(command[0], command)
    return 0  # pragma: no cover - execv does not return
