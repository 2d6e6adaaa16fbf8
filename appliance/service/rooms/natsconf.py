"""nats-server configuration for a hub or a station, as text (pure; docs/rooms.md "Credentials").

The client port listens on loopback only: the box's own web process is its only client. A hub also listens for
leaf nodes on every address; each station authenticates as its own user, whose permissions allow exactly what
the hub's ``DESK`` stream needs to source the station's stream (the JetStream API of the station's own domain,
the delivery and flow-control subjects) plus its own desk requests and its own KV bucket. A box without a user
(a stranger on the same Wi-Fi) is refused at the leaf port; a station cannot publish under another's subjects.

>>> text = hub_config("/tmp/js", {"room2": "secret"}, client_port=0, leaf_port=7422, app_password="x")
>>> 'domain: "hub"' in text, '"svoyak.desk.room2.beat"' in text, "room3" in text
(True, True, False)
"""

from __future__ import annotations

import json

from appliance.service.rooms import protocol

APP_USER = "app"


def _q(value: str) -> str:
    return json.dumps(value)  # a quoted nats-conf string: no variable interpolation, escapes kept


def station_permissions(box_id: str) -> dict:
    """What a station's leaf connection may send to the hub (publish) and receive from it (subscribe): exactly
    what DESK's sourcing of its stream, its heartbeats and claims and its own KV bucket need, each subject naming
    the station (docs/rooms.md "Credentials"). The one exception is ``$JSC.R.*``: nats-server answers its own
    JetStream API requests (DESK creating its source consumer on the station) on ``$JSC.R.<random>``, a subject
    it chooses per request and that names no station; a paired station could only answer a request in flight,
    which the hub then checks (the consumer must be on the station's own stream)."""
    bucket = protocol.room_bucket(box_id)
    return {
        "publish": {"allow": [
            f"{protocol.source_deliver(box_id)}.>",     # the source consumer's deliveries, heartbeats, flow control
            "$JSC.R.*",                                  # replies to the hub's JetStream requests on its domain
            protocol.desk_subject(box_id, "beat"),
            protocol.desk_subject(box_id, "claim"),
            f"$JS.{protocol.HUB_DOMAIN}.API.STREAM.INFO.KV_{bucket}",
            f"$JS.{protocol.HUB_DOMAIN}.API.DIRECT.GET.KV_{bucket}",
            f"$JS.{protocol.HUB_DOMAIN}.API.DIRECT.GET.KV_{bucket}.>",
        ]},
        "subscribe": {"allow": [
            f"$JS.{protocol.box_domain(box_id)}.API.>",  # the hub's requests to its own domain (sourcing)
            f"$JS.FC.{protocol.box_stream(box_id)}.>",   # flow-control answers to its stream's consumer
            f"$JS.FC.{protocol.box_domain(box_id)}.>",   # the same in nats-server's v2 subject form
            f"{protocol.inbox_prefix(box_id)}.>",        # replies to its own inboxes only
        ]},
    }


# A link that went down without a word (a cable pulled, Wi-Fi gone) leaves TCP retransmitting with backoff: after
# a one-minute cut the old connection woke up only ~50 s after the link returned (bench). Pings every 5 s, three
# missed, drop it within ~20 s, and the leaf reconnects as soon as the link is back. (Every 2 s dropped live links
# of six busy stations on a loaded 2-core machine.)
PINGS = 'ping_interval: "5s"\nping_max: 3\n'


def _jetstream(store_dir: str, domain: str, max_file_mb: int) -> str:
    return (f"jetstream {{ store_dir: {_q(store_dir)}, domain: {_q(domain)}, max_file_store: {max_file_mb}MB, "
            f"max_memory_store: 16MB }}\n")


def hub_config(store_dir: str, stations: dict[str, str], client_port: int, leaf_port: int, app_password: str,
               leaf_host: str = "0.0.0.0", ports_dir: str = "", max_file_mb: int = 1024,
               standbys: dict[str, str] | None = None) -> str:
    """The hub's server: domain ``hub``, client port on loopback, leaf port open to paired stations only.

    ``standbys`` (``{box: password}``): standby desks (standby.py), the desk's twin: like the box's own web
    process they may read every stream of the hub (their mirrors of DESK and DESKLOG), so their user names no
    narrowed permissions."""
    users = [{"user": APP_USER, "password": app_password}]
    for box_id, password in sorted(stations.items()):
        users.append({"user": protocol.check_box_id(box_id), "password": password,
                      "permissions": station_permissions(box_id)})
    for box_id, password in sorted((standbys or {}).items()):
        users.append({"user": protocol.check_box_id(box_id), "password": password})
    lines = [
        "server_name: hub\n",
        PINGS,
        f"listen: {_q(f'127.0.0.1:{client_port or -1}')}\n",
        _jetstream(store_dir, protocol.HUB_DOMAIN, max_file_mb),
        f"leafnodes {{ listen: {_q(f'{leaf_host}:{leaf_port or -1}')} }}\n",
        f"authorization {{ users: {json.dumps(users, ensure_ascii=False)} }}\n",
    ]
    if ports_dir:
        lines.append(f"ports_file_dir: {_q(ports_dir)}\n")
    return "".join(lines)


def station_config(box_id: str, store_dir: str, client_port: int, hub_leaf_url: str, user: str, password: str,
                   ports_dir: str = "", max_file_mb: int = 1024, standby: tuple[str, ...] = ()) -> str:
    """A station's server: its own domain, client port on loopback, a leaf connection to the hub.

    ``standby`` (``host:port`` of standby desks): the leaf's other URLs, tried in turn when the hub is gone
    (a standby listens for leaves only once it is the desk: docs/rooms.md "The standby desk")."""
    urls = [f"nats-leaf://{user}:{password}@{hub_leaf_url.split('://', 1)[-1]}"]
    urls += [f"nats-leaf://{user}:{password}@{address.split('://', 1)[-1]}" for address in standby]
    remote = f"url: {_q(urls[0])}" if len(urls) == 1 else f"urls: {json.dumps(urls)}"
    lines = [
        f"server_name: {_q(protocol.check_box_id(box_id))}\n",
        PINGS,
        f"listen: {_q(f'127.0.0.1:{client_port or -1}')}\n",
        _jetstream(store_dir, protocol.box_domain(box_id), max_file_mb),
        f"leafnodes {{ remotes: [ {{ {remote} }} ] }}\n",
    ]
    if ports_dir:
        lines.append(f"ports_file_dir: {_q(ports_dir)}\n")
    return "".join(lines)
