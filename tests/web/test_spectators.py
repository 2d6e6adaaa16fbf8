"""Spectators apart from the game (web/spectators.py, docs/spectators.md): the fan-out through the spectators'
nats-server delivers exactly the board's payload, the snapshot makes a late joiner whole, a spectator can read
the audience subjects and nothing else, and spectators beyond the Socket.IO cap are refused at once while the
host, on the real gunicorn server, is never refused or slowed to a timeout by a thousand of them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import socketio

from appliance.service.spectators import conf
from appliance.service.spectators import server as spectators_server
from tests.crowd import Record, nats_spectator
from tests.web.conftest import IDENTITY, PIN, ROOT, Client, simulator_box

SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": [{"name": "Реки"}, {"name": "Кино"}]}
UPDATE = conf.subject(IDENTITY.box_name, conf.UPDATE)


@pytest.fixture
def spectators_server_process(settings):
    """The spectators' nats-server over the test's data dir (any free ports), as ``svoyak spectators`` runs it."""
    command = spectators_server.prepare(settings.replace(spectators_ws_port=0, spectators_client_port=0))
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while spectators_server.ports(settings) is None:
        assert process.poll() is None and time.monotonic() < deadline, "the spectators' nats-server did not start"
        time.sleep(0.02)
    yield spectators_server.ports(settings)
    process.terminate()
    process.wait(timeout=10)


def fanout_of(server):
    fanout = server.app.extensions["svoyak.hub"].spectators
    fanout._looked = -1e9  # look for the server now, not in up to two seconds
    fanout.ports()
    deadline = time.monotonic() + 10
    while not (fanout.publisher and fanout.publisher.connected):
        assert time.monotonic() < deadline, "the web process did not reach the spectators' nats-server"
        time.sleep(0.02)
    return fanout


def listen(ws_port: int, subjects: list[str], seconds: float, extra: list[bytes] = (), keep: bool = False) -> Record:
    """One NATS WebSocket spectator for ``seconds``, in an event loop of its own (``keep``: every body kept)."""
    record = Record()
    if keep:
        record.bodies = []

    async def run():
        stop = asyncio.Event()
        task = asyncio.ensure_future(nats_spectator(f"ws://127.0.0.1:{ws_port}", subjects, record, stop, extra))
        await asyncio.sleep(seconds)
        stop.set()
        task.cancel()
        await asyncio.wait([task])

    asyncio.run(run())
    return record


def test_the_fast_path_carries_exactly_the_boards_payload(server, connect, spectators_server_process):
    fanout_of(server)
    board = connect("/board")
    board.next("snapshot")
    host = connect("/host", pin=PIN)
    host.next("snapshot")
    heard: list = []
    listener = threading.Thread(target=lambda: heard.append(listen(spectators_server_process["websocket"],
                                                                   [UPDATE], 3.0, keep=True)))
    listener.start()
    time.sleep(1.0)  # subscribed (the listener's PONG) well before the first command
    for number, (name, args) in enumerate([("setup", SETUP), ("next", {}), ("next", {})]):
        ack = host.command(name, f"c{number}", **args)
        assert ack["ok"], ack
    listener.join()
    board_updates = []
    while not board.received.empty():
        kind, data = board.received.get()
        if kind == "update":
            board_updates.append(data)
    assert len(board_updates) >= 3
    record = heard[0]
    assert record.connected == 1 and record.errors == []
    # what a spectator got is the board namespace's own update, the same dict, seq by seq
    assert [json.loads(body) for body in record.bodies] == board_updates


def test_a_late_joiner_is_whole_from_the_snapshot(server, connect):
    host = connect("/host", pin=PIN)
    host.next("snapshot")
    assert host.command("setup", "s1", **SETUP)["ok"]
    board = connect("/board")
    expected = board.next("snapshot")
    with urllib.request.urlopen(server.url + "/board/snapshot.json", timeout=5) as response:
        body = json.loads(response.read())
        assert response.headers["Cache-Control"] == "no-store"
    assert body["snapshot"]["seq"] == expected["seq"]
    assert body["snapshot"]["view"] == expected["view"]  # exactly the board's snapshot
    assert body["hello"]["role"] == "board" and body["hello"]["ssid"] == IDENTITY.hotspot_ssid
    assert PIN not in json.dumps(body["hello"])


def test_a_spectator_reads_the_audience_subjects_and_nothing_else(spectators_server_process, settings):
    port = spectators_server_process["websocket"]
    record = listen(port, [UPDATE], 1.0, extra=[b"PUB svoyak.audience.x.board.update 2\r\nhi",
                                                b"PUB $JS.API.INFO 0\r\n", b"SUB > 9", b"SUB $JS.API.> 10",
                                                b"SUB svoyak.rooms.> 11", b"SUB _INBOX.> 12"])
    violations = [error for error in record.errors if "Permissions Violation" in error]
    publish = [error for error in violations if "Publish" in error]
    subscribe = [error for error in violations if "Subscription" in error]
    assert len(publish) == 2, record.errors
    assert {error.split('"')[1] for error in subscribe} == {">", "$JS.API.>", "svoyak.rooms.>", "_INBOX.>"}
    # the audience subject itself was taken: no violation names it
    assert not any(UPDATE in error for error in record.errors)
    # the client port is on loopback only, and wants the publisher's password
    config = (Path(settings.data_dir) / "spectators" / "nats.conf").read_text()
    assert '"listen": "127.0.0.1:' in config.replace("listen: ", '"listen": ') and "jetstream" not in config


def test_spectators_beyond_the_cap_are_refused_at_once_and_the_host_is_not(settings, memory_battles,
                                                                           recording_capture):
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.session import Session
    from tests.web.conftest import Server
    from web import create_app
    from web.sync import Services

    session = Session(memory_battles, BattleAdapter(), capture=recording_capture, simulator=True)
    session.start()
    running = Server(create_app(settings.replace(spectators_socket_cap=3),
                                Services(session=session, identity=IDENTITY)))
    clients = []
    try:
        for _ in range(3):
            client = socketio.Client(reconnection=False)
            client.connect(running.url + "?audience=1", namespaces=["/board"], transports=["websocket"],
                           wait_timeout=5)
            clients.append(client)
        started = time.monotonic()
        fourth = socketio.Client(reconnection=False)
        with pytest.raises(socketio.exceptions.ConnectionError):
            fourth.connect(running.url + "?audience=1", namespaces=["/board"], transports=["websocket"],
                           wait_timeout=5)
        assert time.monotonic() - started < 3  # refused, not left waiting
        request = urllib.request.Request(running.url + "/socket.io/?EIO=4&transport=polling&audience=1")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 503 and "Зрителей" in refused.value.read().decode()
        assert running.app.extensions["svoyak.admission"].refused == 2
        # those who run the game: never counted, never refused
        host = Client(running.url, "/host", {"pin": PIN})
        assert host.next("snapshot")["view"] is not None
        kiosk = Client(running.url, "/board")
        kiosk.next("snapshot")
        clients.extend([host.sio, kiosk.sio])
        clients[0].disconnect()
        clients.pop(0)
        time.sleep(0.3)
        again = socketio.Client(reconnection=False)
        again.connect(running.url + "?audience=1", namespaces=["/board"], transports=["websocket"], wait_timeout=5)
        clients.append(again)  # a freed place is taken again
    finally:
        for client in clients:
            client.disconnect()
        running.close()
        session.close()


def _box_env(data_dir: Path) -> dict:
    return {"SVOYAK_SPECTATORS_WS_PORT": "0", "SVOYAK_SPECTATORS_CLIENT_PORT": "0"}


@pytest.mark.parametrize("spectators", [101, 1001])
def test_a_thousand_spectators_never_block_the_host(tmp_path, spectators):
    """``svoyak run`` (gunicorn gthread, 100 threads): ``spectators`` on the fast path, 150 more trying
    Socket.IO as spectators (40 admitted, the rest refused); the host page answers and the host connects."""
    with simulator_box(tmp_path, env=_box_env(tmp_path)) as box:
        settings_dir = tmp_path / "spectators"
        deadline = time.monotonic() + 20
        ports = None
        while ports is None and time.monotonic() < deadline:
            for path in settings_dir.glob("*.ports"):
                found = json.loads(path.read_text())
                ports = found if found.get("websocket") else None
            time.sleep(0.1)
        assert ports, "svoyak run did not start the spectators' nats-server"
        ws_url = ports["websocket"][0].replace("0.0.0.0", "127.0.0.1")
        out = tmp_path / "crowd.json"
        crowd = subprocess.Popen([sys.executable, "-m", "tests.crowd", "nats", ws_url,
                                  conf.subject(json.loads((tmp_path / "identity.json").read_text())["box_name"],
                                               conf.UPDATE), str(spectators), "60", str(out)], cwd=ROOT)
        sockets = subprocess.Popen([sys.executable, "-m", "tests.crowd", "socketio", box["url"], "-", "150", "60",
                                    str(tmp_path / "sockets.json")], cwd=ROOT)
        try:
            for ready in (Path(str(out) + ".ready"), tmp_path / "sockets.json.ready"):
                deadline = time.monotonic() + 90
                while not ready.exists():
                    assert time.monotonic() < deadline, f"{ready.name}: the crowd did not connect"
                    time.sleep(0.1)
            started = time.monotonic()
            with urllib.request.urlopen(box["url"] + "/host", timeout=10) as response:
                assert response.status == 200
            host = Client(box["url"], "/host", {"pin": box["host_pin"]})
            assert host.next("snapshot", timeout=10)["view"] is not None
            assert host.command("setup", "s1", **SETUP)["ok"]
            assert host.command("next", "n1")["ok"]
            waited = time.monotonic() - started
            host.close()
            time.sleep(3)  # the crowd's one process reads its thousand sockets in turn
        finally:
            for name in (str(out) + ".stop", str(tmp_path / "sockets.json.stop")):
                Path(name).write_text("")
            for process in (crowd, sockets):
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    heard = json.loads(out.read_text())
    socket_side = json.loads((tmp_path / "sockets.json").read_text())
    assert heard["connected"] == spectators, heard["errors"]
    assert socket_side["connected"] == 40 and socket_side["refused"] == 110, socket_side
    assert heard["arrivals"], "no update reached the fast path's spectators"
    last = max(int(seq) for seq in heard["arrivals"])
    assert len(heard["arrivals"][str(last)]) == spectators  # every spectator heard the host's last command
    print(f"\n{spectators} spectators + 150 on Socket.IO: host page, login, setup and next in {waited:.2f} s")


def test_snapshots_beyond_the_bucket_are_refused_at_once(server, monkeypatch):
    """However many pages poll or join at once, the box answers SNAPSHOTS_PER_S snapshots a second (after a burst
    of SNAPSHOT_BURST); the rest hear 503 in words and come back later."""
    from web import spectators

    clock = [1000.0]
    monkeypatch.setattr(spectators.time, "monotonic", lambda: clock[0])
    answered = refused = 0
    for second in range(3):
        for _ in range(100):  # 100 requests a second
            try:
                with urllib.request.urlopen(server.url + "/board/snapshot.json", timeout=5):
                    answered += 1
            except urllib.error.HTTPError as error:
                assert error.code == 503 and error.headers["Retry-After"]
                assert "Зрителей" in error.read().decode()
                refused += 1
        clock[0] += 1.0
    assert answered == spectators.SNAPSHOT_BURST + 2 * spectators.SNAPSHOTS_PER_S
    assert refused == 300 - answered


def test_the_fan_out_keeps_to_its_own_cores_where_there_are_enough():
    """``svoyak spectators`` pins nats-server (setting spectators_cpus) and nices it (spectators_nice) before it
    becomes the server: on a Pi 3's four cores the upper two, the game keeping 0 and 1 to itself."""
    assert spectators_server.cores("auto", {0, 1, 2, 3}) == {2, 3}
    assert spectators_server.cores("auto", {0, 1}) == {0, 1}  # too few to share: all, and the nice keeps it back
    assert spectators_server.cores("all", {0, 1, 2, 3}) == {0, 1, 2, 3}
    assert spectators_server.cores("1,3,9", {0, 1, 2, 3}) == {1, 3}
    assert spectators_server.cores("9", {0, 1}) == {0, 1}  # none of them here: every core rather than none


def test_svoyak_spectators_runs_the_server_niced_on_its_cores(tmp_path):
    cores = sorted(os.sched_getaffinity(0))
    env = {**os.environ, "SVOYAK_DATA_DIR": str(tmp_path), "SVOYAK_CONFIG": str(tmp_path / "none.toml"),
           "SVOYAK_SPECTATORS_WS_PORT": "0", "SVOYAK_SPECTATORS_CLIENT_PORT": "0", "SVOYAK_SPECTATORS_NICE": "7",
           "SVOYAK_SPECTATORS_CPUS": str(cores[-1])}
    (tmp_path / "none.toml").write_text("")
    process = subprocess.Popen([sys.executable, "-m", "appliance.cli", "spectators"], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not list((tmp_path / "spectators").glob("*.ports")):
            assert process.poll() is None and time.monotonic() < deadline, "the spectators' nats-server did not start"
            time.sleep(0.05)
        stat = Path(f"/proc/{process.pid}/stat").read_text()
        assert Path(f"/proc/{process.pid}/comm").read_text().strip() == "nats-server"
        assert int(stat[stat.rindex(")") + 2:].split()[16]) == min(19, os.nice(0) + 7)  # field 19: nice
        assert os.sched_getaffinity(process.pid) == {cores[-1]}
    finally:
        process.terminate()
        process.wait(timeout=10)

