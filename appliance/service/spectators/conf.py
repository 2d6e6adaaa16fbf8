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
    ('svoyak-T3ST', '____2_a_')
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
                  ws_host: str = "0.0.0.0", uplink: str = "", ports_dir: str = "", name: str = "svoyak-spectators",
                  monitor_port: int = 0) -> str:
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
        # Several URLs (comma-separated): the organiser's nodes, tried in turn when one is gone.
        urls = [url.strip() for url in uplink.split(",") if url.strip()]
        lines.append(f"leafnodes {{ remotes: [ {{ urls: {_q(urls)}, deny_imports: {_q(['>'])} }} ] }}\n")
    if monitor_port:
        lines.append(f"http: {_q(f'127.0.0.1:{monitor_port}')}\n")  # benches and tests count the uplink's bytes
    if ports_dir:
        lines.append(f"ports_file_dir: {_q(ports_dir)}\n")
    return "".join(lines)


HUB = "hub"
VIEWER = "viewer"


def organiser_node_config(name: str, cluster_host: str, routes: list[str], hubs: dict[str, str],
                          route_password: str, client_port: int = 4222, cluster_port: int = 6222,
                          leaf_port: int = 7422, ws_port: int = 443, tls_cert: str = "", tls_key: str = "",
                          monitor_port: int = 0) -> str:
    """One node of the cluster the organiser runs for online viewers (docs/spectators.md "Online viewers").

    - ``leafnodes``: each hub box leaf-connects with its own user from ``hubs`` (user -> password), which may
      publish the audience subjects and receive nothing;
    - ``websocket``: viewers, anonymous (``no_auth_user``), subscribe-only to the audience subjects; with
      ``tls_cert``/``tls_key`` it is ``wss://`` (a viewer page on https needs it), without, plain ``ws://``;
    - ``cluster``: the other nodes as routes, with a password of their own; no JetStream anywhere.

    >>> text = organiser_node_config("n1", "0.0.0.0", ["nats-route://r:pw@10.0.0.2:6222"], {"hub-a": "x"}, "pw")
    >>> '"no_auth_user": "viewer"' in text, "jetstream" in text, '"hub-a"' in text
    (True, False, True)
    """
    hub_permissions = {"publish": {"allow": [f"{ROOT}.>"]}, "subscribe": {"deny": [">"]}}
    users = [{"user": user, "password": password, "permissions": hub_permissions}
             for user, password in sorted(hubs.items())]
    viewer = {"user": VIEWER, "password": route_password + "-never-told", "permissions": permissions(SPECTATOR)}
    tls = (f", tls {{ cert_file: {_q(tls_cert)}, key_file: {_q(tls_key)} }}" if tls_cert else ", no_tls: true")
    lines = [
        f"server_name: {_q(name)}\n",
        f"listen: {_q(f'127.0.0.1:{client_port}')}\n",
        f"max_connections: 100000\nmax_subscriptions: {MAX_SUBSCRIPTIONS}\nmax_pending: {MAX_PENDING}\n",
        f"write_deadline: {_q(WRITE_DEADLINE)}\n",
        'ping_interval: "10s"\nping_max: 3\n',
        # the hubs' users live here (a leaf port without its own authorization checks these, permissions included)
        f"authorization {{ users: {json.dumps([viewer] + users, ensure_ascii=False)} }}\n",
        f"leafnodes {{ listen: {_q(f'0.0.0.0:{leaf_port}')} }}\n",
        f"websocket {{ listen: {_q(f'0.0.0.0:{ws_port}')}{tls}, compression: false, handshake_timeout: \"5s\", "
        f"{_q('no_auth_user')}: {_q(VIEWER)} }}\n",
        f"cluster {{ name: \"svoyak-online\", listen: {_q(f'{cluster_host}:{cluster_port}')}, "
        f"authorization {{ user: \"route\", password: {_q(route_password)} }}, routes: {_q(routes)} }}\n",
    ]
    if monitor_port:
        lines.append(f"http: {_q(f'127.0.0.1:{monitor_port}')}\n")
    return "".join(lines)
