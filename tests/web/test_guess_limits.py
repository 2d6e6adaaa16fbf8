"""Guess limits for the whole box (issue 10, «Nobody in»), measured: attackers on 199 loopback addresses
(127.0.0.2-200, each client socket bound to its own) guess the host PIN through the director's login form and
the host's Socket.IO connect, and seat codes through phone claims, as fast as they can. The guesses the box
judges stay within its budget (web/guard.py: ``burst`` at once, then one per ``refill_ns``), whatever the
number of addresses, while the host already logged in keeps commanding and reconnects with its pass, and a phone
that proved its code keeps pressing. The run prints guesses per minute for the README.

The bound asserted is a count, not a speed: a slower machine makes fewer guesses, never more."""

from __future__ import annotations

import http.client
import itertools
import socket
import threading
import time
import types
import urllib.parse

import pytest
import socketio

from appliance.service.battle_adapter import BattleAdapter
from appliance.service.session import Session
from web import create_app
from web.sync import Services

from .conftest import Client, PressingCapture, Server

PIN = "246813"
IDENTITY = types.SimpleNamespace(box_name="svoyak-T3ST", hotspot_ssid="Svoyak-T3ST", hotspot_password="pass2word7",
                                 host_pin=PIN, session_secret="")
ADDRESSES = [f"127.0.0.{n}" for n in range(2, 201)]  # 199 addresses, as in the trial
WINDOW_S = 30.0
WORKERS = 24
SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": 4}


@pytest.fixture
def box(settings, memory_battles, recording_capture):
    capture = PressingCapture(recording_capture)
    session = Session(memory_battles, BattleAdapter(), capture=capture, simulator=True)
    recording_capture.session = session
    session.start()
    running = Server(create_app(settings, Services(session=session, identity=IDENTITY)))
    yield running
    running.close()
    session.close()


def login_guess(port: int, address: str, guess: str) -> int:
    """One PIN guess through the director's login form, from ``address``: the HTTP status."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(address, 0))
    try:
        connection.request("POST", "/director/login", body=urllib.parse.urlencode({"pin": guess}),
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        return connection.getresponse().status
    finally:
        connection.close()


def socket_guess(url: str, port: int, address: str, namespace: str, auth: dict) -> str:
    """One guess as a Socket.IO connect from ``address`` (a socket bound to it, handed to the WebSocket client):
    the refusal's code, or ``"admitted"``."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(address, 0))
    client = socketio.Client(reconnection=False, websocket_extra_options={"socket": raw})
    reasons = []
    client.on("connect_error", reasons.append, namespace=namespace)
    try:
        client.connect(url, namespaces=[namespace], auth=auth, transports=["websocket"], wait_timeout=5)
    except socketio.exceptions.ConnectionError:
        return reasons[0]["data"]["code"] if reasons and isinstance(reasons[0], dict) else "no answer"
    client.disconnect()
    return "admitted"


def attack(until: float, guess_once) -> dict:
    """``WORKERS`` threads cycling through the 199 addresses until ``until``: ``guess_once(address, guess)`` returns
    the verdict; the verdicts are counted."""
    counts: dict = {}
    lock = threading.Lock()
    addresses = itertools.cycle(ADDRESSES)
    guesses = (f"{n:06d}" for n in itertools.count(100_000))

    def work():
        for _ in range(100_000):  # bounded; the deadline ends it first
            if time.monotonic() >= until:
                return
            with lock:
                address, guess = next(addresses), next(guesses)
            verdict = guess_once(address, guess)
            with lock:
                counts[verdict] = counts.get(verdict, 0) + 1

    threads = [threading.Thread(target=work) for _ in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts


def test_pin_guesses_from_199_addresses_stay_within_the_box_budget(box, capsys):
    port = box.http.server_port
    guard = box.app.extensions["svoyak.hub"].namespaces["/host"].guard
    host = Client(box.url, "/host", {"pin": PIN})            # the host, logged in before the attack
    token = host.next("hello")["pass"]
    assert host.command("setup", "h1", **SETUP)["ok"]
    started = time.monotonic()
    until = started + WINDOW_S
    commands = []

    def keep_hosting():  # the host keeps working meanwhile: commands, and a reconnect with the pass
        for number in itertools.count():
            if time.monotonic() >= until or number > 1000:
                return
            commands.append(host.command("phones", f"h-phones-{number}", enabled=number % 2 == 0)["ok"])
            time.sleep(0.5)

    hosting = threading.Thread(target=keep_hosting)
    hosting.start()

    def guess_once(address, guess):
        # The director's login has a PIN and a budget of its own (issue 12): the host PIN is guessed on /host.
        return socket_guess(box.url, port, address, "/host", {"pin": guess})

    counts = attack(until, guess_once)
    elapsed_s = time.monotonic() - started
    hosting.join()
    again = Client(box.url, "/host", {"pin": "", "pass": token})  # a reconnect of the host's page mid-attack
    assert again.next("hello")["role"] == "host"
    locked_out = socket_guess(box.url, port, "127.0.0.9", "/host", {"pin": PIN})  # the right PIN, no pass: waits

    judged = counts.get("error.pin", 0)
    allowed = guard.burst + int(elapsed_s * 1e9 // guard.refill_ns) + 1
    total = sum(counts.values())
    assert counts.get("other", 0) == 0 and counts.get("no answer", 0) == 0, counts
    assert judged <= allowed, (counts, allowed)
    assert judged == guard.wrong
    assert total > 10 * allowed            # the attackers really tried
    assert commands and all(commands)       # every host command went through during the attack
    assert locked_out == "error.pin_locked"
    with capsys.disabled():
        print(f"\nPIN guesses from {len(ADDRESSES)} loopback addresses over {elapsed_s:.0f} s: {total} sent, "
              f"{judged} judged ({judged * 60 / elapsed_s:.0f} a minute, budget {allowed}), "
              f"{total - judged} refused unchecked; once the first {guard.burst} are spent, "
              f"{60e9 / guard.refill_ns:.1f} a minute; the box allows {guard.per_day()} a day "
              f"({guard.per_day() / guard.space:.4%} of {guard.space:,}); the host sent {len(commands)} commands "
              f"meanwhile, all applied")
    for client in (host, again):
        client.close()


def test_seat_code_guesses_stay_within_the_budget_and_a_proven_phone_keeps_pressing(box, capsys):
    port = box.http.server_port
    guard = box.app.extensions["svoyak.hub"].namespaces["/player"].guard
    host = Client(box.url, "/host", {"pin": PIN})
    assert host.command("setup", "h1", **SETUP)["ok"]
    assert host.command("next", "h2")["ok"]
    seq = host.command("phones", "h3", enabled=True)["seq"]
    codes = host.until_seq(seq)["seat_codes"]
    phone = Client(box.url, "/player")
    assert phone.sio.call("claim", {"player": 1, "code": codes[1]}, namespace="/player", timeout=5)["ok"]
    started = time.monotonic()
    until = started + WINDOW_S
    presses = []

    def keep_pressing():
        for number in itertools.count():
            if time.monotonic() >= until or number > 1000:
                return
            ack = phone.sio.call("press", {"player": 1, "code": codes[1], "id": f"ph{number}"}, namespace="/player",
                                 timeout=5)
            presses.append(ack["ok"])
            time.sleep(0.5)

    pressing = threading.Thread(target=keep_pressing)
    pressing.start()

    def guess_once(address, guess):
        if guess in codes:
            return "skipped"
        raw = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(address, 0))
        client = socketio.Client(reconnection=False, websocket_extra_options={"socket": raw})
        try:
            client.connect(box.url, namespaces=["/player"], transports=["websocket"], wait_timeout=5)
            verdicts = [client.call("claim", {"player": int(guess) % 3, "code": guess}, namespace="/player",
                                    timeout=5)["error"]["code"] for _ in range(3)]
        finally:
            client.disconnect()
        return tuple(verdicts)

    raw_counts = attack(until, guess_once)
    elapsed_s = time.monotonic() - started
    pressing.join()
    counts: dict = {}
    for verdicts, times in raw_counts.items():
        for verdict in (verdicts if isinstance(verdicts, tuple) else (verdicts,)):
            counts[verdict] = counts.get(verdict, 0) + times
    judged = counts.get("error.seat_code", 0)
    allowed = guard.burst + int(elapsed_s * 1e9 // guard.refill_ns) + 1
    assert judged <= allowed and judged == guard.wrong, (counts, allowed)
    assert sum(counts.values()) > 5 * allowed
    assert presses and all(presses)         # the phone that proved its code pressed throughout
    with capsys.disabled():
        print(f"\nSeat-code guesses from {len(ADDRESSES)} loopback addresses over {elapsed_s:.0f} s: "
              f"{sum(counts.values())} sent, {judged} judged ({judged * 60 / elapsed_s:.1f} a minute, budget "
              f"{allowed}; once the first {guard.burst} are spent, {60e9 / guard.refill_ns:.2f} a minute); the box allows "
              f"{guard.per_day()} a day; a proven phone pressed {len(presses)} times "
              f"meanwhile, all taken")
    for client in (host, phone):
        client.close()
