"""Each station's credentials against the real nats-server, on loopback: a hub and two stations as leaf nodes
(the configuration the boxes write, natsconf), a stranger with a guessed password. DESK sources a station's
stream under the station's narrowed permissions (deliveries, flow control, API replies); a paired station reads
only its own bucket, cannot claim or beat as another, cannot forge another's deliveries or the default
``$JS.S.>`` ones; the stranger is refused at the leaf port and reads nothing (docs/rooms.md "Credentials")."""

from __future__ import annotations

import asyncio
import shutil
import time

import pytest

from appliance.service.rooms import natsconf, wire
from appliance.service.rooms.server import NatsServer, find_binary

EVENTS = 600  # enough for the source consumer's flow control to run (its answers come back over the leaf)


def _binaries():
    found = [find_binary("")]
    debian = shutil.which("nats-server", path="/usr/sbin:/usr/bin")
    if debian and debian not in found:
        found.append(debian)
    return found


def _server(folder, text, binary) -> tuple[NatsServer, dict]:
    server = NatsServer(folder, binary=binary)
    server.write(text)
    return server, server.start()


async def _until(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"not within {timeout_s} s: {what}")


async def _check(hub_url: str, room2_url: str, stranger_url: str) -> dict:
    import nats
    from nats.js.api import ExternalStream, KeyValueConfig, StorageType, StreamConfig, StreamSource

    out: dict = {}
    hub = await nats.connect(hub_url, user=natsconf.APP_USER, password="app")
    js = hub.jetstream()
    sources = [StreamSource(name=wire.box_stream(box), external=ExternalStream(
        api=f"$JS.{box}.API", deliver=wire.source_deliver(box))) for box in ("room2", "room3")]
    await js.add_stream(StreamConfig(name=wire.DESK_STREAM, storage=StorageType.FILE, sources=sources))
    for box in ("room2", "room3"):
        kv = await js.create_key_value(KeyValueConfig(bucket=wire.room_bucket(box), history=1, direct=True))
        await kv.put("assignments", f'[{{"battle": "{box}"}}]'.encode())
    forged: list[str] = []

    async def seen(message):
        if message.data == b"forged":
            forged.append(message.subject)

    for subject in ("$JS.S.>", f"{wire.source_deliver('room3')}.>", wire.desk_subject("room3", "beat")):
        await hub.subscribe(subject, cb=seen)

    async def claim(message):
        await message.respond(b"claimed")

    await hub.subscribe(wire.desk_subject("room3", "claim"), cb=claim)
    await hub.flush()

    room2 = await nats.connect(room2_url, inbox_prefix=wire.inbox_prefix("room2"))
    local = room2.jetstream()
    await local.add_stream(StreamConfig(name=wire.box_stream("room2"), subjects=[wire.box_subjects("room2")],
                                        storage=StorageType.FILE))
    for seq in range(1, EVENTS + 1):
        await local.publish(wire.event_subject("room2", "b1"),
                            wire.encode_event("room2", "b1", seq, {"type": "ThemeStarted", "at_ns": seq}),
                            headers={"Nats-Msg-Id": wire.message_id("b1", seq)})

    async def sourced():
        return (await js.stream_info(wire.DESK_STREAM)).state.messages >= EVENTS

    await _until(sourced, 90, "DESK sourced the station's stream under its permissions")
    out["sourced"] = (await js.stream_info(wire.DESK_STREAM)).state.messages

    remote = room2.jetstream(domain=wire.HUB_DOMAIN, timeout=2)
    for box in ("room2", "room3"):
        try:
            kv = await remote.key_value(wire.room_bucket(box))
            out[f"bucket_{box}"] = (await kv.get("assignments")).value.decode()
        except Exception as error:  # nats.errors.TimeoutError / NoRespondersError: the leaf forwards nothing
            out[f"bucket_{box}"] = "refused: " + type(error).__name__
    try:
        await room2.request(wire.desk_subject("room3", "claim"), b"{}", timeout=2)
        out["claim_as_room3"] = "answered"
    except Exception as error:
        out["claim_as_room3"] = "refused: " + type(error).__name__
    for subject in ("$JS.S.a1b2c3d4", f"{wire.source_deliver('room3')}.S.a1b2c3d4",
                    wire.desk_subject("room3", "beat")):
        await room2.publish(subject, b"forged")
    await room2.flush()
    await asyncio.sleep(1.5)
    out["forged_seen"] = list(forged)
    await room2.close()

    stranger = await nats.connect(stranger_url)
    try:
        kv = await stranger.jetstream(domain=wire.HUB_DOMAIN, timeout=2).key_value(wire.room_bucket("room2"))
        out["stranger_bucket"] = (await kv.get("assignments")).value.decode()
    except Exception as error:
        out["stranger_bucket"] = "refused: " + type(error).__name__
    await stranger.close()
    await hub.close()
    return out


@pytest.mark.parametrize("binary", _binaries())
def test_a_station_reaches_only_its_own_subjects_and_a_stranger_nothing(tmp_path, binary):
    import socket

    with socket.socket() as probe:  # the ports file names no leaf port: pick a free one, as a laptop hub does
        probe.bind(("127.0.0.1", 0))
        leaf_port = probe.getsockname()[1]
    servers = []
    try:
        hub, ports = _server(tmp_path / "hub", natsconf.hub_config(
            str(tmp_path / "hub" / "js"), {"room2": "p2", "room3": "p3"}, client_port=0, leaf_port=leaf_port,
            app_password="app", leaf_host="127.0.0.1", ports_dir=str(tmp_path / "hub")), binary)
        servers.append(hub)
        leaf_url = f"nats-leaf://127.0.0.1:{leaf_port}"
        urls = {}
        for box, user, password in (("room2", "room2", "p2"), ("room3", "room3", "p3"),
                                    ("stranger", "room2", "guessed")):
            server, box_ports = _server(tmp_path / box, natsconf.station_config(
                box, str(tmp_path / box / "js"), 0, leaf_url, user, password, ports_dir=str(tmp_path / box)), binary)
            servers.append(server)
            urls[box] = box_ports["nats"][0]
        out = asyncio.run(_check(ports["nats"][0], urls["room2"], urls["stranger"]))
        stranger_log = (tmp_path / "stranger" / "nats.log").read_text()
    finally:
        for server in servers:
            server.stop()
    assert out["sourced"] == EVENTS                     # sourcing works with exactly these permissions
    assert out["bucket_room2"] == '[{"battle": "room2"}]'
    assert out["bucket_room3"].startswith("refused")    # another station's assignments
    assert out["claim_as_room3"].startswith("refused")  # a claim as another station
    assert out["forged_seen"] == []                     # nor its deliveries, the default ones, or its beats
    assert "Authorization Violation" in stranger_log    # a guessed password: the hub says so to its face
    assert out["stranger_bucket"].startswith("refused")
