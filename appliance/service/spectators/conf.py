"""The spectators' nats-server configuration, as text (pure; docs/spectators.md "The server").

- The client port listens on loopback only, for one user, the web process's publisher (``app``), which may
  publish under ``svoyak.audience.>`` and subscribe to nothing.
- The WebSocket port listens on every address for anyone, with no credentials: such a connection is the user
  ``spectator`` (``no_auth_user``), which may subscribe to ``svoyak.audience.>`` and publish nothing. There is no
  JetStream on this server at all, so no spectator can create, read or delete a stream either.
- An uplink (optional) is a leaf connection to the organiser's cluster: the box's audience subjects cross it once
  per update whatever the number of viewers beyond it, and nothing comes back into the hall (``deny_imports``).

>>> text = server_config(client_port=4290, ws_port=8090, publisher_password="p", spectator_password="s")
>>> '"no_auth_user": "spectator"' in text, '"deny": [">"]' in text, "jetstream" in text
(True, True, False)
"""

from __future__ import annotations

import json
import re

PUBLISHER = "app"
SPECTATOR = "spectator"
ROOT = "svoyak.audience"
BOARD = "board"
UPDATE = "update"
SNAPSHOT = "snapshot"

# A slow phone must not hold the box's memory: nats-server drops a connection whose unsent data passes
# MAX_PENDING (a board update is a few kB, a snapshot about 15 kB), or that cannot take a write in WRITE_DEADLINE.
MAX_PENDING = "2MB"
WRITE_DEADLINE = "3s"
MAX_CONNECTIONS = 5000
MAX_SUBSCRIPTIONS = 8   # per connection: a page subscribes to two subjects


def _q(value) -> str:
    return json.dumps(value)  # quoted nats-conf strings and lists: no variable interpolation, escapes kept


def token(name: str) -> str:
    """A box name as one NATS subject token: letters, digits, ``-`` and ``_`` kept, anything else ``_``.

    >>> token("svoyak-T3ST"), token("зал 2.a>")
    ('svoyak-T3ST', '______a_')
    """
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "_"


def subject(box: str, kind: str, audience: str = BOARD) -> str:
    """``svoyak.audience.<box>.<audience>.<kind>``, kind ``update`` or ``snapshot``.

    >>> subject("svoyak-T3ST", UPDATE)
    'svoyak.audience.svoyak-T3ST.board.update'
    """
    return f"{ROOT}.{token(box)}.{audience}.{kind}"


def permissions(user: str) -> dict:
    """What each user may do: the publisher publishes the audience subjects only, a spectator reads them only."""
    if user == PUBLISHER:
        return {"publish": {"allow": [f"{ROOT}.>"]}, "subscribe": {"deny": [">"]}}
    return {"publish": {"deny": [">"]}, "subscribe": {"allow": [f"{ROOT}.>"]}}


def server_config(client_port: int, ws_port: int, publisher_password: str, spectator_password: str,
                  ws_host: str = "0.0.0.0", uplink: str = "", ports_dir: str = "", name: str = "svoyak-spectators") -> str:
    """The whole configuration. ``spectator_password`` is never told to anyone: a spectator is the user no one
    logs in as, reached only through the WebSocket port's ``no_auth_user``."""
    users = [
        {"user": PUBLISHER, "password": publisher_password, "permissions": permissions(PUBLISHER)},
        {"user": SPECTATOR, "password": spectator_password, "permissions": permissions(SPECTATOR)},
    ]
    lines = [
        f"server_name: {_q(name)}\n",
        f"listen: {_q(f'127.0.0.1:{client_port or -1}')}\n",
        f"max_connections: {MAX_CONNECTIONS}\n",
        f"max_subscriptions: {MAX_SUBSCRIPTIONS}\n",
        f"max_pending: {MAX_PENDING}\n",
        f"write_deadline: {_q(WRITE_DEADLINE)}\n",
        "max_payload: 1MB\n",
        'ping_interval: "10s"\nping_max: 3\n',
        f"authorization {{ users: {json.dumps(users, ensure_ascii=False)} }}\n",
        # No TLS on the hall's own Wi-Fi (WPA2 is the link's protection, as for the pages); no compression: one
        # frame a phone, and an old phone's CPU is the scarce part.
        f"websocket {{ listen: {_q(f'{ws_host}:{ws_port or -1}')}, no_tls: true, compression: false, "
        f"handshake_timeout: \"5s\", {_q('no_auth_user')}: {_q(SPECTATOR)} }}\n",
    ]
    if uplink:
        # Into the hall nothing: the box hears no subject from the cluster, so no one online can write to its board.
        lines.append(f"leafnodes {{ remotes: [ {{ url: {_q(uplink)}, deny_imports: {_q(['>'])} }} ] }}\n")
    if ports_dir:
        lines.append(f"ports_file_dir: {_q(ports_dir)}\n")
    return "".join(lines)
