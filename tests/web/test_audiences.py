"""The hub's broadcast with audience records (web/sync.py): one payload per audience per update, and a record
that disagrees with the host's view sends that audience nothing instead of stopping the host's update."""

from __future__ import annotations

import logging

from appliance.service.battle_adapter import BattleAdapter

from .conftest import PIN

SETUP = {"profile": "eurocup", "players": ["Аня", "Борис"], "themes": 4}


def test_a_record_that_disagrees_with_the_view_sends_that_audience_nothing(server, connect, monkeypatch, caplog):
    host, board = connect("/host", pin=PIN), connect("/board")
    host.next("snapshot")
    board.next("snapshot")
    assert host.command("setup", "a1", **SETUP)["ok"]
    board.until_seq(server.session.seq)
    original = BattleAdapter.view

    def broken(self, state, battle_id, now_ns):  # tomorrow's mistake: a mapping where the board has a number
        return {**original(self, state, battle_id, now_ns), "answerer": {"text": "Вопрос 1.1"}}

    monkeypatch.setattr(BattleAdapter, "view", broken)
    with caplog.at_level(logging.ERROR, logger="web.sync"):
        ack = host.command("next", "a2")
    assert ack["ok"] and host.until_seq(ack["seq"])["answerer"] == {"text": "Вопрос 1.1"}  # the host has it
    assert "not sent to /board" in caplog.text
    monkeypatch.setattr(BattleAdapter, "view", original)
    ack = host.command("next", "a3")
    board.sio.emit("resync", {}, namespace="/board")  # the page sees the gap and asks again: a good view
    view = board.until_seq(ack["seq"])
    assert view["theme"]["index"] == 0 and view["answerer"] is None and "Вопрос 1.1" not in repr(view)


def test_every_board_gets_the_same_payload_made_once(server, connect, monkeypatch):
    from web.sync import Hub

    made = []
    original = Hub.payload

    def counted(audience, update):
        made.append((audience.name, update["seq"]))
        return original(audience, update)

    monkeypatch.setattr(Hub, "payload", staticmethod(counted))
    host, boards = connect("/host", pin=PIN), [connect("/board") for _ in range(3)]
    ack = host.command("setup", "b1", **SETUP)
    for board in boards:
        assert board.until_seq(ack["seq"])["battle"]["profile"] == "eurocup"
    assert sorted(made) == sorted({("board", ack["seq"]), ("overlay", ack["seq"]), ("player", ack["seq"]),
                                   ("simulator", ack["seq"])})
