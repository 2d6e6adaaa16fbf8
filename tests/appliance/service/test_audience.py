"""The audiences' records (appliance/service/audience.py): built by allow-list at every depth, so a key the host's
view grows reaches no audience; every payload of whole battles holds only declared keys; the doc describes every
record field by field."""

from __future__ import annotations

import itertools
import re
import types
import typing
from pathlib import Path

import pytest

from appliance.service import audience
from appliance.service.audience import (BOARD, OVERLAY, PLAYER, SIMULATOR, BoardView, LobbyRoom, NotOnTheAllowList,
                                        fields, is_record, project)
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.packages import QuestionPackages
from appliance.service.session import Session
from tests.appliance.packages.conftest import sport_siq

DOC = Path(__file__).resolve().parents[3] / "docs" / "socketio-events.md"
ENVELOPE = {"seq", "server_now_ns", "event", "changes", "removed"}


def undeclared(hint, value, path: str = "") -> list[str]:
    """Every key of ``value`` that the declared type ``hint`` does not have, at any depth (and plain data that is
    not plain). Written apart from :func:`project`: it checks a payload, it does not make one."""
    if value is None:
        return []
    if is_record(hint):
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__} where {hint.__name__} is declared"]
        declared = fields(hint)
        out = [f"{path}.{key}" for key in value if key not in declared]
        for key, item in value.items():
            if key in declared:
                out += undeclared(declared[key], item, f"{path}.{key}")
        return out
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint)
        return [found for i, element in enumerate(value) for found in undeclared(item, element, f"{path}[{i}]")]
    if origin is dict:  # ``dict[str, X]`` (a price's count, a reason's figures): every value an X
        _key, item = typing.get_args(hint)
        return [found for key, element in value.items() for found in undeclared(item, element, f"{path}.{key}")]
    if origin in (types.UnionType, typing.Union):
        options = [option for option in typing.get_args(hint) if option is not type(None)]
        if len(options) == 1:
            return undeclared(options[0], value, path)
        shaped = [option for option in options if is_record(option) or typing.get_origin(option) in (list, dict)]
        if isinstance(value, (list, tuple, dict)):  # plain data or a shape (a reason's figures): some shape fits
            fits = [undeclared(option, value, path) for option in shaped
                    if isinstance(value, dict) == (typing.get_origin(option) is dict or is_record(option))]
            return min(fits, key=len) if fits else [f"{path}: {type(value).__name__} where {hint} is declared"]
    return [] if isinstance(value, (str, int, float, bool)) else [f"{path}: {type(value).__name__} is not plain"]


def undeclared_update(record, update: dict) -> list[str]:
    """An audience's update: its envelope, its event and each changed key against ``record``."""
    out = [f"update.{key}" for key in set(update) ^ ENVELOPE]
    out += undeclared(audience.AudienceEvent, update["event"], "event")
    declared = fields(record)
    for key, value in update["changes"].items():
        out += [f"changes.{key}"] if key not in declared else undeclared(declared[key], value, f"changes.{key}")
    out += [f"removed.{key}" for key in update["removed"] if key not in declared]
    return out


def test_a_record_keeps_its_declared_keys_at_every_depth():
    view = {"battle": {"id": "b1", "profile": "eurocup", "profile_title": "Кубок", "finished": False,
                       "on_claps": False, "phase": "question", "shootout": False, "secret": "x"},
            "players": [{"index": 0, "name": "Аня", "score": 10, "led": "#f00", "eligible": True, "answered": False,
                         "answering": False, "absent": False, "seat_code": "123456"}],
            "question": {"index": 0, "price": 10, "answer": None, "text": "Вопрос"},
            "reading": {"current": {"text": "Вопрос"}}, "seat_codes": ["123456"], "allowed": {"next": None}}
    board = BOARD.view(view)
    assert set(board) == {"battle", "players", "question"}
    assert "secret" not in board["battle"] and "seat_code" not in board["players"][0]
    assert board["question"] == {"index": 0, "price": 10, "answer": None}
    assert PLAYER.view(view) == {"battle": {"id": "b1", "finished": False},
                                 "players": [{"index": 0, "name": "Аня", "led": "#f00", "answering": False}]}


def test_a_mapping_cannot_ride_in_under_a_plain_field():
    with pytest.raises(NotOnTheAllowList):
        BOARD.view({"answerer": {"text": "Вопрос 1.1"}})
    with pytest.raises(NotOnTheAllowList):
        BOARD.view({"expired": [{"answer": "Ответ"}]})
    with pytest.raises(NotOnTheAllowList):
        BOARD.view({"players": {"0": {"name": "Аня"}}})


def test_an_update_keeps_only_the_events_type_and_its_two_words():
    setup = {"type": "BattleSetUp", "at_ns": 1, "players": ["Аня"], "questions": [[["Вопрос 1.1", "Ответ 1.1"]]]}
    update = {"seq": 3, "server_now_ns": 9, "event": setup, "changes": {"battle": None, "reading": {"x": 1},
                                                                         "seat_codes": ["111111"]},
              "removed": ["undo"]}
    assert BOARD.update(update) == {"seq": 3, "server_now_ns": 9, "event": {"type": "BattleSetUp"},
                                    "changes": {"battle": None}, "removed": []}
    judged = BOARD.update({**update, "event": {"type": "AnswerJudged", "correct": True, "player": 1, "at_ns": 5}})
    assert judged["event"] == {"type": "AnswerJudged", "correct": True}


def test_the_lobby_keeps_what_the_hall_may_read():
    room = {"box": "b2", "name": "Зал 2", "online": True, "ago_s": 3.0, "battle": "x", "secret": "k",
            "playing": {"battle": "x", "players": ["Аня"], "scores": [10], "over": False, "slot": None, "events": 4,
                        "broken": False, "code": "7777"}, "last": None}
    (shown,) = audience.lobby([room])
    assert "secret" not in shown and "code" not in shown["playing"] and not undeclared(LobbyRoom, shown)


class Clock:
    def __init__(self) -> None:
        self.now_ns = 10**12

    def __call__(self) -> int:
        return self.now_ns


@pytest.mark.parametrize("board_answer", ["announced", "over"])
def test_every_payload_of_a_whole_battle_holds_only_declared_keys(tmp_path, memory_battles, board_answer):
    """A whole battle from a package, with every kind of ruling, a correction and undo: each audience's snapshot
    and update after every change, walked against its record."""
    packages = QuestionPackages.in_folder(tmp_path / "packages", memory_battles)
    package_id = packages.add("кубок.siq", sport_siq(6))["id"]
    clock = Clock()
    session = Session(memory_battles, BattleAdapter(packages=packages, board_answer=board_answer), clock=clock,
                      simulator=True).start(timer_thread=False)
    updates: list[dict] = []
    session.subscribe(updates.append)
    ids = itertools.count()

    def command(name, **args):
        clock.now_ns += 10**8
        session.command(name, args or None, f"c{next(ids)}")

    def press(player):
        clock.now_ns += 10**7
        session.on_capture_event({"event": "press", "seq": next(ids), "player": player + 1, "t_ns": clock.now_ns,
                                  "status": "won"})

    command("phones", enabled=True)
    command("setup", profile="eurocup", players=["Аня", "Борис", "Вера"], themes=[{"name": "", "red": False}] * 4,
            package={"id": package_id})
    audiences = (BOARD, OVERLAY, PLAYER, SIMULATOR)
    checked, number = 0, 0
    while not session.snapshot()["view"]["battle"]["finished"]:
        command("next")
        view = session.snapshot()["view"]
        if view["question"] is None or view["question"]["over"]:
            continue
        command("reading_done")
        eligible = [p["index"] for p in session.snapshot()["view"]["players"] if p["eligible"]]
        first, second = eligible[number % len(eligible)], eligible[(number + 1) % len(eligible)]
        press(first)
        command("point")
        if number % 4 == 1 and len(eligible) > 1:
            command("wrong")
            press(second)
            command("point")
            command("right")
            command("correct", player=first, correct=True, reason="Засчитано")
        elif number % 4 == 2:
            command("right")
            command("undo")
            command("withdraw", reason="Снят")
        else:
            command("right")
        if session.snapshot()["view"]["allowed"].get("announce") is None:
            command("announce")
        number += 1
        for record in audiences:
            assert not undeclared(record.record, record.view(session.snapshot()["view"]), "view")
        assert number < 60
    for update in updates:
        for record in audiences:
            assert not undeclared_update(record.record, record.update(update)), update["event"]
            checked += 1
    assert number >= 20 and checked > 400
    assert any(BOARD.update(u)["changes"].get("question", {}) and BOARD.update(u)["changes"]["question"]["answer"]
               for u in updates if "question" in u["changes"])  # the answers do reach the board once public
    session.close()


def test_a_key_the_hosts_view_grows_reaches_no_audience(tmp_path, memory_battles, monkeypatch):
    """Tomorrow's host field (a text in the question, a new top-level key): on no audience until a record says."""
    original = BattleAdapter.view

    def grown(self, state, battle_id, now_ns):
        view = original(self, state, battle_id, now_ns)
        view["host_notes"] = "Вопрос 1.1 о теме 1."
        if view["question"] is not None:
            view["question"] = {**view["question"], "text": "Вопрос 1.1 о теме 1."}
        view["players"] = [{**player, "seat_code": "424242"} for player in view["players"]]
        return view

    monkeypatch.setattr(BattleAdapter, "view", grown)
    session = Session(memory_battles, BattleAdapter(), simulator=True).start(timer_thread=False)
    updates: list[dict] = []
    session.subscribe(updates.append)
    session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис"], "themes": 4}, "c1")
    session.command("next", None, "c2")
    session.command("next", None, "c3")
    assert session.snapshot()["view"]["question"]["text"]  # the host has it
    for record in (BOARD, OVERLAY, PLAYER, SIMULATOR):
        text = repr([record.snapshot(session.snapshot()), [record.update(update) for update in updates]])
        assert "Вопрос 1.1" not in text and "424242" not in text and "host_notes" not in text
    session.close()


def test_the_doc_describes_every_record_field_by_field():
    doc = DOC.read_text(encoding="utf-8")
    records = {name: value for name, value in vars(audience).items() if is_record(value)
               and value.__module__ == audience.__name__}
    assert len(records) >= 20
    for name, record in records.items():
        section = re.search(rf"^#### `{name}`\n(.*?)(?=^#|\Z)", doc, flags=re.M | re.S)
        assert section, f"docs/socketio-events.md has no table of {name}"
        documented = re.findall(r"^\| `(\w+)` \|", section.group(1), flags=re.M)
        assert documented == list(fields(record)), name


def test_the_board_record_is_the_host_view_but_its_host_keys():
    """The board shows what it showed before records (issue 18 keeps its visible behaviour): every key of the host's
    view but the host's own."""
    doc = DOC.read_text(encoding="utf-8")
    view_table = doc.split("### The view", 1)[1].split("\n## ", 1)[0]
    keys = re.findall(r"^\| `(\w+)`(?:, `(\w+)`)?( \*host\*)? \|", view_table, flags=re.M)
    board = {key for first, second, host in keys if not host for key in (first, second) if key}
    assert board == set(fields(BoardView))


@pytest.mark.parametrize("board_answer", ["announced", "over", "never"])
def test_the_public_papers_print_an_answer_once_the_board_showed_it(tmp_path, memory_battles, board_answer):
    """``/battles/<id>/protocol`` needs no login and the battle's id is on the board: its "answer" note follows
    the board (issue 18: the listener read the answer of the question in play there)."""
    from appliance.rules.battle.protocol import protocol_rows

    packages = QuestionPackages.in_folder(tmp_path / "packages", memory_battles)
    package_id = packages.add("кубок.siq", sport_siq(6))["id"]
    clock = Clock()
    session = Session(memory_battles, BattleAdapter(packages=packages, board_answer=board_answer), clock=clock,
                      simulator=True).start(timer_thread=False)
    ids = itertools.count()

    def command(name):
        clock.now_ns += 10**8
        session.command(name, None, f"c{next(ids)}")

    session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис"], "themes": [{"name": ""}] * 4,
                              "package": {"id": package_id}}, "setup")
    for name in ("next", "next", "reading_done"):
        command(name)
    notes = lambda: [row.source for row in protocol_rows(audience.public_battle(session.state, board_answer))]
    assert all("Ответ 1.1" not in note for note in notes())            # in play: the hall has not heard it
    assert [row.source for row in protocol_rows(session.state)][0].endswith("Ответ 1.1")  # the full papers have it
    clock.now_ns += 10**7
    session.on_capture_event({"event": "press", "seq": 1, "player": 1, "t_ns": clock.now_ns, "status": "won"})
    command("point")
    command("right")
    assert any("Ответ 1.1" in note for note in notes()) is (board_answer == "over")
    command("announce")
    assert any("Ответ 1.1" in note for note in notes()) is (board_answer != "never")
    public = audience.public_battle(session.state, board_answer)
    assert not any(text for theme in public.setup.questions for text, _ in theme)  # no question's text, ever
    session.close()
