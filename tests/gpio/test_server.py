"""The capture link, server side, over real Unix sockets with a bare client (docs/capture-protocol.md)."""

from __future__ import annotations

import time

import pytest

from gpio.server import Server, SocketInUse
from gpio.service import wait_for

MS = 1_000_000


def test_hello_gets_a_welcome_then_a_status_event(service, raw_client):
    client = raw_client()
    welcome = client.hello()
    assert welcome["type"] == "welcome" and welcome["protocol"] == 1 and welcome["instance"] == service.instance
    assert welcome["factory"] == "mock" and welcome["precision"] == "mock" and welcome["players"] == 4
    status = client.recv_until(lambda m: m["type"] == "event" and m["event"] == "status" and m["mode"] == "linked")
    assert status["armed"] and status["eligible"] == [1, 2, 3, 4]


def test_wrong_protocol_version_is_refused(service, raw_client):
    client = raw_client()
    client.send({"type": "hello", "protocol": 99})
    assert client.recv()["code"] == "protocol"
    with pytest.raises(ConnectionError):
        client.recv()


def test_nothing_but_hello_is_accepted_first(service, raw_client):
    client = raw_client()
    client.send({"type": "cmd", "id": "x", "op": "reset"})
    assert client.recv()["type"] == "error"


def test_commands_reply_and_bad_ones_change_nothing(service, raw_client):
    client = raw_client()
    client.hello()
    reply = client.command("c1", "arm", eligible=[1, 3], round_id="q1")
    assert reply["ok"] and reply["result"]["held"] == []
    assert client.command("c2", "led", player=9, on=True)["error"]["code"] == "bad-player"
    assert client.command("c3", "arm", eligible=[1], round_id="")["error"]["code"] == "bad-request"
    assert client.command("c4", "fly")["error"]["code"] == "bad-op"
    assert client.command("c5", "beep", ms=0)["error"]["code"] == "bad-request"
    status = client.command("c6", "status")["result"]
    assert status["round_id"] == "q1" and status["eligible"] == [1, 3] and status["leds"] == [False] * 4


def test_a_resent_command_id_is_not_applied_twice(service, raw_client, box):
    client = raw_client()
    client.hello()
    first = client.command("arm-1", "arm", eligible=[1, 2], round_id="q1")
    box.press(1, time.monotonic_ns())
    assert box.lit()[0]
    again = client.command("arm-1", "arm", eligible=[1, 2], round_id="q1")
    assert again == first
    assert box.lit()[0], "re-applying the arm would have turned the winner's LED off"


def test_events_carry_gapless_sequence_numbers_and_acks_drop_them(service, raw_client, box):
    client = raw_client()
    client.hello()
    client.command("c1", "arm", eligible=[1, 2], round_id="q1")
    t = time.monotonic_ns()
    box.press(2, t)
    box.press(1, t + 3 * MS)
    seen = []
    while len([m for m in seen if m.get("event") == "press"]) < 2:
        message = client.recv()
        if message["type"] == "event":
            seen.append(message)
    seqs = [m["seq"] for m in seen]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    client.send({"type": "ack", "seq": seqs[-1]})
    assert wait_for(lambda: service.server.unacknowledged == 0)


def test_unacknowledged_events_are_resent_after_reconnect_and_acked_ones_are_not(service, raw_client, box):
    client = raw_client()
    client.hello()
    client.command("c1", "arm", eligible=[1, 2, 3], round_id="q1")
    box.press(1, time.monotonic_ns())
    won = client.recv_until(lambda m: m.get("event") == "press")
    client.send({"type": "ack", "seq": won["seq"]})
    lockout = client.recv_until(lambda m: m.get("event") == "lockout")
    client.close()  # the appliance drops before acknowledging the lockout
    assert wait_for(lambda: not service.server.linked)
    box.press(3, time.monotonic_ns())  # a press while nobody listens
    again = raw_client()
    welcome = again.hello(instance=service.instance, last_seq=won["seq"])
    assert welcome["resent"] >= 2
    resent = [again.recv() for _ in range(welcome["resent"])]
    assert resent[0] == lockout
    assert [m["event"] for m in resent[1:]][:2] == ["status", "press"]  # "unlinked" status, then the press
    assert all(m["seq"] > won["seq"] for m in resent)


def test_silent_appliance_times_out_and_the_box_goes_standalone(service, raw_client):
    client = raw_client()
    client.hello()
    assert wait_for(lambda: service.capture.arbiter.mode == "linked")
    # The test client never sends heartbeats: after capture_link_timeout_ms the service drops it.
    assert wait_for(lambda: service.capture.arbiter.mode == "standalone", timeout=5)
    kinds = [e.get("kind") for e in service.events if e["event"] == "fault"]
    assert "link-timeout" in kinds


def test_server_sends_heartbeats_when_idle(service, raw_client):
    client = raw_client()
    client.hello()
    assert client.recv_until(lambda m: m["type"] == "heartbeat")["t_ns"] > 0


def test_a_second_hello_cannot_take_the_live_link_and_its_presses(service, raw_client, box):
    appliance = raw_client()
    appliance.hello()
    appliance.command("c1", "arm", eligible=[1, 2], round_id="q1")
    intruder = raw_client()
    intruder.send({"type": "hello", "protocol": 1, "client": "appliance", "instance": None, "last_seq": 0})
    assert intruder.recv()["code"] == "busy"
    with pytest.raises(ConnectionError):
        intruder.recv()
    box.press(2, time.monotonic_ns())
    assert appliance.recv_until(lambda m: m.get("event") == "press")["player"] == 2  # the press went to the appliance
    appliance.close()                                  # the appliance goes (a restart): the link is free again
    assert wait_for(lambda: not service.server.linked)
    restarted = raw_client()
    assert restarted.hello()["type"] == "welcome"


def test_a_line_over_64_kib_is_never_handled_even_in_pieces(service, raw_client):
    client = raw_client()
    client.hello()
    before = client.command("c1", "status")["result"]
    line = b'{"type":"cmd","id":"big","op":"arm","eligible":[1],"round_id":"' + b"x" * 100_000 + b'"}\n'
    try:
        for start in range(0, len(line), 30_000):  # in pieces: no single read holds it all
            client.sock.sendall(line[start:start + 30_000])
    except BrokenPipeError:
        pass  # the service refused the line as soon as it passed 64 KiB and closed: the rest cannot be sent
    assert client.recv_until(lambda m: m["type"] == "error")["code"] == "too-long"
    with pytest.raises(ConnectionError):
        client.recv_until(lambda m: False)
    again = raw_client()
    again.hello()
    assert again.command("c2", "status")["result"]["round_id"] == before["round_id"]  # nothing was armed


def test_a_live_socket_is_never_stolen_but_a_stale_one_is_replaced(service, tmp_path):
    second = Server(service.settings.capture_socket, instance="x", heartbeat_ms=50, timeout_ms=400,
                    execute=lambda op, args: {}, players=4, on_link=lambda up: None, welcome_info=dict)
    with pytest.raises(SocketInUse):
        second.listen()
    second.close()
    import socket

    stale = tmp_path / "stale.sock"
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(stale))
    leftover.close()  # the file stays, nobody listens
    third = Server(stale, instance="y", heartbeat_ms=50, timeout_ms=400, execute=lambda op, args: {},
                   players=4, on_link=lambda up: None, welcome_info=dict)
    third.listen()
    assert oct(stale.stat().st_mode & 0o777) == "0o660"
    third.close()
