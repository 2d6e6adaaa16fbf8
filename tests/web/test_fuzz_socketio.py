"""Socket.IO fuzzing (issue 10, «No input stops a worker»): thousands of hostile messages from real python-socketio
clients against a real threaded server. Every message that asks for an ack gets one (a dict with ``ok``), every
refusal leaves the session exactly as it was (same update number, same engine state object), and the server
serves a normal host afterwards. The run prints its figures for the README."""

from __future__ import annotations

import random
import threading

import pytest

from appliance.service.battle_adapter import HOST_COMMANDS, BattleAdapter
from appliance.service.session import Session
from web import create_app
from web.sync import Services

from .conftest import IDENTITY, PIN, Client, PressingCapture, Server

MESSAGES = 3000
SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"],
         "themes": [{"name": "Реки"}, {"name": "Кино"}, {"name": "Химия"}, {"name": "Спорт"}]}


@pytest.fixture
def quiet_server(settings, memory_battles, recording_capture):
    """The real app and session with no deadline thread: nothing but the fuzzed messages changes the state, so a
    refusal's "before" and "after" can be compared exactly."""
    capture = PressingCapture(recording_capture)
    session = Session(memory_battles, BattleAdapter(), capture=capture, simulator=True)
    recording_capture.session = session
    session.start(timer_thread=False)
    running = Server(create_app(settings, Services(session=session, identity=IDENTITY)))
    yield running
    running.close()
    session.close()


def junk_values(rng: random.Random):
    """Values a hostile client can put in any field."""
    pool = [float("inf"), float("-inf"), float("nan"), 10**30, -10**30, 2**53 + 1, 10**300, -1, 0, 1, 3, 63, 64,
            True, False, None, "", "0", "1234", "x" * 20_000, "١٢٣", "\u0000", [], [1, 2], {}, {"a": {"b": [None]}},
            1.5, -0.0, 1e308, "Infinity", "NaN", [[[[[[[[[[[]]]]]]]]]]], list(range(6000))]
    return pool[rng.randrange(len(pool))]


def junk_message(rng: random.Random, event: str):
    """A message for ``event``: the right shape with one field spoiled, a wrong shape, or no fields at all."""
    shapes = {
        "command": {"id": f"f{rng.randrange(10**9)}", "name": rng.choice((*HOST_COMMANDS, "setup", "phones",
                                                                         "button_test", "dance", "")),
                    "args": {"extra_ms": 1000, "player": 1, "appeal": 0, "accepted": True, "question": 0,
                             "correct": True, "on": True, "enabled": True}},
        "press": {"player": 1, "code": "0000", "id": f"p{rng.randrange(10**9)}"},
        "claim": {"player": 1, "code": "0000"},
        "simulate": {"player": 0, "action": rng.choice(("press", "release"))},
    }
    message = dict(shapes.get(event, {"any": 1}))
    roll = rng.random()
    if roll < 0.6 and message:
        field = rng.choice(list(message))
        message[field] = junk_values(rng)
        if event == "command" and field != "args" and rng.random() < 0.5:  # or a spoiled argument
            message["args"] = {**message["args"], rng.choice(list(message["args"])): junk_values(rng)}
    elif roll < 0.7 and message:
        message.pop(rng.choice(list(message)))
    elif roll < 0.9:
        return junk_values(rng)
    return message


def raw_call(client: Client, namespace: str, body: str):
    """Send ``body`` as the JSON of a Socket.IO event packet, bypassing the client's encoder (which cannot make a
    5,000-digit number or a truncated array); the ack it gets, or ``"no ack"``."""
    answered = threading.Event()
    acks = []
    ack_id = client.sio._generate_ack_id(namespace, lambda *data: (acks.append(data[0] if data else None),
                                                                   answered.set()))
    client.sio.eio.send(f"2{namespace},{ack_id}{body}")
    return acks[0] if answered.wait(10) else "no ack"


RAW_BODIES = ('["press",' + "9" * 5000 + "]", '["command",{"id":"r1","name":"extend","args":{"extra_ms":'
              + "9" * 5000 + "}}]", "[" * 100_000 + "]" * 100_000, '["command",{"id":"r2"', "{}", '{"a":1}', "[]",
              "[1]", "[null,{}]", '["press",1e999]', '["command",{"id":"r3","name":"extend","args":{"extra_ms":NaN}}]',
              '["command",{"id":"r4","name":"extend","args":{"extra_ms":-Infinity}}]', '"press"', " 17", "nul",
              '["claim",{"player":1,"code":"0000"},2,3]', '["simulate",{"player":0,"action":"press"},null]',
              '["press",{"player":' + "1" * 4000 + ',"code":"1","id":"x"}]')


def test_raw_malformed_packets_are_answered_too(quiet_server, capsys):
    server = quiet_server
    host = Client(server.url, "/host", {"pin": PIN})
    assert host.command("setup", "s1", **SETUP)["ok"]
    others = {"/player": Client(server.url, "/player"), "/sim": Client(server.url, "/sim"), "/host": host}
    sent = 0
    for namespace, client in others.items():
        for body in RAW_BODIES:
            before = (server.session.seq, server.session.state)
            ack = raw_call(client, namespace, body)
            sent += 1
            assert isinstance(ack, dict) and ack["ok"] is False and ack["error"]["code"] in (
                "error.bad_command", "error.unknown_event", "error.argument_range", "error.argument_type"), (
                namespace, body[:80], ack)
            assert (server.session.seq, server.session.state) == before
    assert host.command("next", "s2")["ok"]  # the connection and the server still serve
    with capsys.disabled():
        print(f"\nSocket.IO raw packets: {sent} malformed (5,000-digit numbers, 100,000-deep arrays, truncated JSON, "
              f"NaN, extra arguments), every one answered with a refusal, state unchanged")
    for client in others.values():
        client.close()


def test_every_hostile_message_is_answered_and_a_refusal_changes_nothing(quiet_server, capsys):
    server = quiet_server
    session = server.session
    host = Client(server.url, "/host", {"pin": PIN})
    assert host.command("setup", "s1", **SETUP)["ok"]
    assert host.command("phones", "s2", enabled=True)["ok"]
    clients = {"/host": host, "/player": Client(server.url, "/player"), "/sim": Client(server.url, "/sim"),
               "/board": Client(server.url, "/board")}
    events = ("command", "press", "claim", "simulate", "resync", "clock", "dance", "", "on_connect", "__init__",
              "connect", "disconnect")
    rng = random.Random(10)
    sent = refused = accepted = 0
    for number in range(MESSAGES):
        namespace = rng.choice(list(clients))
        event = rng.choice(events)
        data = junk_message(rng, event)
        before = (session.seq, session.state, session.battle_id)
        ack = clients[namespace].sio.call(event, data, namespace=namespace, timeout=10)
        sent += 1
        assert isinstance(ack, dict) and isinstance(ack.get("ok"), bool), (number, namespace, event, data, ack)
        if ack["ok"]:
            accepted += 1
            continue
        refused += 1
        error = ack["error"]
        assert error["code"] and error["ru"] and error["en"], ack
        assert error["code"] != "error.internal", (namespace, event, data, ack)  # every bad input has its word
        assert (session.seq, session.state, session.battle_id) == before, (number, namespace, event, data, ack)
    # Still serving: a fresh host logs in and plays.
    late = Client(server.url, "/host", {"pin": PIN})
    assert late.next("hello")["role"] == "host"
    assert late.command("phones", "after-1", enabled=False)["ok"]        # still commanding
    assert late.sio.call("clock", {}, namespace="/host", timeout=5)["ok"]
    with capsys.disabled():
        print(f"\nSocket.IO fuzz: {sent} messages, {refused} refused with a worded ack, {accepted} accepted, "
              f"0 unanswered, state unchanged after every refusal")
    assert refused > MESSAGES // 2
    for client in (*clients.values(), late):
        client.close()


def test_hostile_connect_auth_is_refused_in_words(quiet_server):
    import socketio

    from .conftest import refusal

    server = quiet_server
    auths = ({"pin": {"a": 1}}, {"pin": 10**30}, {"pin": None}, {"pin": float("nan")}, {"pin": "x" * 100_000},
             {"pin": ["2468"]}, {"pass": 5}, {"pass": "x" * 10_000, "pin": "0"}, {"pass": None}, "2468", [PIN], 7)
    codes = []
    for auth in auths:
        try:
            codes.append(refusal(server.url, "/host", auth)["code"])
        except socketio.exceptions.ConnectionError:
            codes.append("no words")
    assert set(codes) <= {"error.pin", "error.pin_locked"}, codes
    board = Client(server.url, "/board", {"pass": {"nested": [1]}})  # read-only roles ignore what they need not
    assert board.next("hello")["role"] == "board"
    board.close()
