"""The audience's fan-out: the box's updates for spectators, published once to nats-server, which serves them.

A hall's phones on ``/watch`` (and online viewers, through a cluster the organiser runs) read the board's
updates from nats-server's own WebSocket listener, so the web worker's threads stay with the people who run
the game (docs/spectators.md). :mod:`conf` writes that server's configuration (pure), :mod:`publisher` is the
web process's one publishing connection, :mod:`server` runs the server (``svoyak spectators``).
"""
