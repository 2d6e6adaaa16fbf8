"""The Socket.IO protocol (docs/socketio-events.md) with real python-socketio clients against a real server:
roles and the PIN, numbered updates and resync after a dropped connection, command ids applied once, and
refusals worded with their rule, Russian then English."""

from __future__ import annotations

import pytest

from .conftest import PIN, refusal

SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"],
         "themes": [{"name": "Реки"}, {"name": "Кино"}, {"name": "Химия"}, {"name": "Спорт"}]}


def test_the_host_needs_the_pin(server, connect):
    reason = refusal(server.url, "/host", {"pin": "0000"})
    assert reason == {"code": "error.pin", "ru": "Неверный PIN", "en": "Wrong PIN"}
    host = connect("/host", pin=PIN)
    hello = host.next("hello")
    assert hello["role"] == "host" and hello["protocol"] == 2
    assert "eurocup" in [profile["name"] for profile in hello["profiles"]]
    snapshot = host.next("snapshot")
    assert snapshot["view"]["battle"] is None


def test_wrong_pins_lock_the_whole_box_out(server):
    guard = server.app.extensions["svoyak.hub"].namespaces["/host"].guard
    for _ in range(guard.burst):
        assert refusal(server.url, "/host", {"pin": "1111"})["code"] == "error.pin"
    # even the right PIN waits now: the box's budget of guesses is spent (web/guard.py)
    assert refusal(server.url, "/host", {"pin": PIN})["code"] == "error.pin_locked"


def test_the_board_follows_every_step_and_cannot_command(server, connect):
    host = connect("/host", pin=PIN)
    board = connect("/board")
    hello = board.next("hello")
    assert hello["ssid"] == "Svoyak-T3ST" and hello["host_url"].endswith("/host")
    board.next("snapshot")
    host.next("snapshot")
    assert host.command("setup", "c1", **SETUP)["ok"]
    ack = host.command("next", "c2")
    view = board.until_seq(ack["seq"])
    assert view["battle"]["profile"] == "eurocup"
    assert view["theme"]["name"] == "Реки" and view["question"] is None
    assert [player["name"] for player in view["players"]] == ["Аня", "Борис", "Вера"]
    # the board's namespace has no command handler at all: it is told so, nothing changes
    refused = board.sio.call("command", {"id": "b1", "name": "next", "args": {}}, namespace="/board", timeout=5)
    assert refused["ok"] is False and refused["error"]["code"] == "error.unknown_event"
    assert server.session.seq == ack["seq"]


def test_a_repeated_command_id_is_applied_once(server, connect):
    host = connect("/host", pin=PIN)
    host.command("setup", "c1", **SETUP)
    first = host.command("next", "tap-7")
    again = host.command("next", "tap-7")
    assert first["ok"] and again["ok"] and again["duplicate"] and not first["duplicate"]
    assert again["seq"] == first["seq"]
    assert len(server.session.state.themes) == 1


def test_a_refused_command_says_which_rule_in_russian_then_english(server, connect):
    host = connect("/host", pin=PIN)
    host.command("setup", "c1", **SETUP)
    before = server.session.seq
    ack = host.command("right", "c2")
    assert ack["ok"] is False
    assert ack["error"]["rule"] == "eurocup 2.6"
    assert ack["error"]["ru"] == "Никто не отвечает — сначала укажите отвечающего (2.6)"
    assert ack["error"]["en"] == "Nobody is answering: point to the answerer first (eurocup 2.6)"
    assert server.session.seq == before                      # nothing changed
    bad = host.command("dance", "c3")
    assert bad["ok"] is False and bad["error"]["code"] == "error.unknown_command"


def test_a_dropped_client_resyncs_from_a_snapshot(server, connect):
    host = connect("/host", pin=PIN)
    board = connect("/board")
    board.next("snapshot")
    host.command("setup", "c1", **SETUP)
    board.close()                                            # Wi-Fi drops
    host.command("next", "c2")
    last = host.command("next", "c3")
    board = connect("/board")                                # and comes back
    snapshot = board.next("snapshot")
    assert snapshot["seq"] == last["seq"]
    assert snapshot["view"]["question"]["price"] == 10
    expected = server.session.snapshot()["view"]
    assert "allowed" not in snapshot["view"] and "allowed" in expected   # the host's verdicts stay on the host
    assert snapshot["view"] == {key: value for key, value in expected.items()
                                if key not in ("allowed", "appeals", "questions", "seat_codes", "battles", "undo",
                                                "reading")}


def test_a_client_that_missed_a_number_asks_again(server, connect):
    host = connect("/host", pin=PIN)
    board = connect("/board")
    board.next("snapshot")
    host.command("setup", "c1", **SETUP)
    board.sio.emit("resync", {}, namespace="/board")
    snapshot = board.next("snapshot")
    assert snapshot["seq"] == server.session.seq
    assert snapshot["view"]["battle"]["profile"] == "eurocup"


def press(phone, press_id, player, code):
    return phone.sio.call("press", {"id": press_id, "player": player, "code": code}, namespace="/player", timeout=5)


def test_phones_press_only_when_the_host_allows(server, connect):
    host = connect("/host", pin=PIN)
    phone = connect("/player")
    host.command("setup", "c1", **SETUP)
    host.command("next", "c2")
    refused = press(phone, "p1", 2, "0000")
    assert refused["ok"] is False and refused["error"]["code"] == "error.phones_off"
    ack = host.command("phones", "c4", enabled=True)
    code = host.until_seq(ack["seq"])["seat_codes"][2]      # the host page shows it; the host tells Вера
    host.command("next", "c3")
    assert phone.sio.call("claim", {"player": 2, "code": code}, namespace="/player", timeout=5) == {"ok": True}
    counted = press(phone, "p2", 2, code)
    assert counted == {"ok": True, "seq": server.session.seq, "duplicate": False, "counted": True}
    assert press(phone, "p2", 2, code)["duplicate"]         # a resend of the same press: applied once
    view = server.session.snapshot()["view"]
    assert view["answerer"] == 2 and view["presses"][0]["source"] == "phone"


def test_only_the_host_sees_the_seat_codes(server, connect):
    host = connect("/host", pin=PIN)
    board, phone = connect("/board"), connect("/player")
    board.next("snapshot")
    phone.next("snapshot")
    host.command("setup", "c1", **SETUP)
    ack = host.command("phones", "c2", enabled=True)
    codes = host.until_seq(ack["seq"])["seat_codes"]
    assert len(codes) == 3 and len(set(codes)) == 3
    updates = []
    while not updates or updates[-1]["seq"] < ack["seq"]:
        updates.append(board.next("update"))
    for client in (board, phone):
        assert "seat_codes" not in client.until_seq(ack["seq"])
        client.sio.emit("resync", {}, namespace=client.namespace)
        assert "seat_codes" not in client.next("snapshot")["view"]
    for late in (connect("/board"), connect("/player"), connect("/sim")):   # a fresh snapshot leaves them out too
        assert "seat_codes" not in late.next("snapshot")["view"]
    assert not any(repr(code) in repr(update) for update in updates for code in codes)   # nor in any event


def test_a_spectator_guessing_seat_codes_is_locked_out(server, connect):
    host = connect("/host", pin=PIN)
    host.command("setup", "c1", **SETUP)
    host.command("next", "c2")
    host.command("next", "c3")
    ack = host.command("phones", "c4", enabled=True)
    code = host.until_seq(ack["seq"])["seat_codes"][0]
    guesser = connect("/player")
    before = server.session.seq
    burst = server.app.extensions["svoyak.hub"].namespaces["/player"].guard.burst
    wrong = [guess for guess in (f"{digit}" * 6 for digit in range(10)) if guess not in codes_of(host)][:burst]
    assert len(wrong) == burst
    for number, guess in enumerate(wrong):
        refused = press(guesser, f"g{number}", 0, guess)
        assert refused["ok"] is False and refused["error"]["code"] == "error.seat_code"
        assert refused["error"]["ru"] == "Неверный код места: спросите код у ведущего"
        assert refused["error"]["en"] == "Wrong seat code: ask the host for your code"
    # now even the right code waits: the box's budget of code guesses is spent (web/guard.py)
    locked = press(guesser, "g-right", 0, code)
    assert locked["ok"] is False and locked["error"]["code"] == "error.seat_code_locked"
    claim = guesser.sio.call("claim", {"player": 0, "code": code}, namespace="/player", timeout=5)
    assert claim["error"]["code"] == "error.seat_code_locked"
    assert server.session.seq == before and server.session.snapshot()["view"]["presses"] == []   # nothing changed


def test_a_phone_with_a_stale_code_is_refused_after_phones_are_enabled_again(server, connect):
    host = connect("/host", pin=PIN)
    phone = connect("/player")
    host.command("setup", "c1", **SETUP)
    host.command("next", "c2")
    host.command("next", "c3")
    old = host.until_seq(host.command("phones", "c4", enabled=True)["seq"])["seat_codes"][1]
    host.command("phones", "c5", enabled=False)
    new = host.until_seq(host.command("phones", "c6", enabled=True)["seq"])["seat_codes"][1]
    stale = press(phone, "p1", 1, old)
    assert stale["ok"] is False and stale["error"]["code"] == "error.seat_code"
    assert press(phone, "p2", 1, new)["counted"]


def test_the_simulator_presses_through_the_capture(server, connect):
    host = connect("/host", pin=PIN)
    sim = connect("/sim")
    host.command("setup", "c1", **SETUP)
    host.command("next", "c2")
    host.command("next", "c3")
    ack = sim.sio.call("simulate", {"player": 1, "action": "press"}, namespace="/sim", timeout=5)
    assert ack["ok"]
    assert server.session.snapshot()["view"]["answerer"] == 1


def test_updates_reach_clients_in_order_from_native_threads(server, connect):
    board = connect("/board")
    board.next("snapshot")
    host = connect("/host", pin=PIN)
    host.command("setup", "c1", **SETUP)
    for number in range(2, 8):
        host.command("phones", f"c{number}", enabled=number % 2 == 0)
    seqs = []
    while len(seqs) < 7:
        seqs.append(board.next("update")["seq"])
    assert seqs == sorted(seqs) and seqs == list(range(seqs[0], seqs[0] + 7))


def test_a_command_resent_after_a_reconnect_is_applied_once(server, connect):
    """The tablet sent "next", Wi-Fi dropped before the ack; on a new connection it sends the same id again."""
    host = connect("/host", pin=PIN)
    host.command("setup", "c1", **SETUP)
    first = host.command("next", "tablet-42")
    host.close()
    again = connect("/host", pin=PIN)
    resent = again.command("next", "tablet-42")
    assert resent == {**first, "duplicate": True}
    assert len(server.session.state.themes) == 1


def test_malformed_requests_get_a_worded_refusal_not_a_crash(server, connect):
    host = connect("/host", pin=PIN)
    setup = {"profile": "eurocup", "players": ["Аня", "Борис"], "themes": 1}
    for payload, code, argument in (
            (None, "error.bad_command", None), ("next", "error.bad_command", None),
            ({"name": "next"}, "error.bad_command", None), ({"id": "", "name": "next"}, "error.bad_command", None),
            ({"id": "x" * 200, "name": "next"}, "error.bad_command", None),
            ({"id": "m1", "name": 7}, "error.bad_command", None),
            ({"id": "m2", "name": "setup", "args": {**setup, "profile": "nope"}}, "error.unknown_profile", "profile"),
            ({"id": "m3", "name": "setup", "args": {**setup, "players": "Аня"}}, "error.argument_type", "players"),
            ({"id": "m4", "name": "setup", "args": {"profile": "eurocup"}}, "error.argument_missing", "players"),
            ({"id": "m5", "name": "setup", "args": {**setup, "colour": 1}}, "error.argument_unknown", "colour"),
            ({"id": "m6", "name": "setup", "args": [1]}, "error.argument_type", "args")):
        ack = host.sio.call("command", payload, namespace="/host", timeout=5)
        assert ack["ok"] is False and ack["error"]["code"] == code, payload
        assert ack["error"].get("params", {}).get("argument") == argument, payload
        assert ack["error"]["ru"] and ack["error"]["en"]
    assert server.session.battle_id is None


def test_malformed_presses_are_refused_too(server, connect):
    phone = connect("/player")
    sim = connect("/sim")
    for payload in (None, {"player": "x", "id": "p1"}, {"player": 1}, {"player": 1, "id": "p2", "code": None}):
        ack = phone.sio.call("press", payload, namespace="/player", timeout=5)
        assert ack["ok"] is False and ack["error"]["code"] in ("error.bad_command", "error.phones_off"), payload
    for payload in (None, "7", {"player": "x", "code": "1234"}):
        ack = phone.sio.call("claim", payload, namespace="/player", timeout=5)
        assert ack["ok"] is False and ack["error"]["code"] in ("error.bad_command", "error.phones_off"), payload
    for payload in (None, {"player": "x"}, {"player": 9, "action": "press"}, {"player": 0, "action": "dance"}):
        ack = sim.sio.call("simulate", payload, namespace="/sim", timeout=5)
        assert ack["ok"] is False and ack["error"]["code"] == "error.bad_command", payload


def test_the_pin_is_never_on_the_board_unless_the_host_button_is_held_at_the_box(server, connect, monkeypatch):
    import queue

    import web.board

    board = connect("/board")                                # the box's own kiosk (127.0.0.1)
    hello = board.next("hello")
    assert "pin" not in hello                                # the audience reads the board: never the PIN
    assert hello["host_url"] == server.url + "/host"         # the simulator: the address the board was opened with
    monkeypatch.setattr(web.board, "is_local", lambda address: False)
    phone = connect("/board")                                # a watcher's phone on the hotspot
    phone.next("hello")
    monkeypatch.undo()
    # The host lost the PIN and holds the host button at the box: the capture says so, the box's own board shows it.
    server.session.on_capture_event({"event": "reset_button_held", "t_ns": 1, "held_ms": 3000})
    assert board.next("pin_shown") == {"pin": PIN, "shown_ms": server.app.config["SVOYAK_SETTINGS"].pin_shown_ms}
    with pytest.raises(queue.Empty):                         # never over Wi-Fi
        phone.next("pin_shown", timeout=0.5)


def test_the_doc_names_the_host_only_keys_and_the_access_refusals():
    import pathlib
    import re

    from appliance.service.audience import BoardView, fields
    from appliance import words

    doc = (pathlib.Path(__file__).parents[2] / "docs" / "socketio-events.md").read_text(encoding="utf-8")
    host_only = set(re.findall(r"^\| `(\w+)` \*host\* \|", doc, flags=re.M))
    # the keys the doc marks as the host's are on no audience's record (appliance/service/audience.py)
    assert host_only >= {"allowed", "seat_codes", "reading"} and host_only.isdisjoint(fields(BoardView))
    for code in ("error.seat_code", "error.seat_code_locked", "error.pin", "error.pin_locked"):
        assert f"| `{code}` |" in doc and words.has(code)


def codes_of(host) -> list:
    return host.view["seat_codes"] or []
