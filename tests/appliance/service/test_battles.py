"""The battle desk over a real SQLite store: validate, append durably, cache; replay on reopening."""

from __future__ import annotations

import io
import threading

import pytest

from appliance.rules.battle import (AnswerJudged, BattleRuleError, BattleSetUp, ButtonPressed, PriceAnnounced,
                                    ReadingStarted, ThemeStarted)
from appliance.service.presets import load_profile
from appliance.service.battles import Battles, UnknownBattleError
from appliance.store import BATTLE, DuplicateCommandError, EventStore


@pytest.fixture
def desk(tmp_path):
    store = EventStore(tmp_path / "events.sqlite")
    yield Battles(store)
    store.close()


def setup_event(profile="eurocup", players=("Аня", "Борис", "Вера")):
    return BattleSetUp(at_ns=0, profile=load_profile(profile), players=players, themes=4)


def test_create_submit_and_state(desk):
    battle = desk.create(setup_event())
    state = desk.submit(battle, ThemeStarted(at_ns=10, name="Реки"))
    assert desk.state(battle) is state and state.seq == 2
    assert desk.list()[0]["battle_id"] == battle and desk.list()[0]["phase"] == "between_questions"


def test_a_refused_event_is_neither_stored_nor_applied(desk):
    battle = desk.create(setup_event())
    before = desk.state(battle)
    with pytest.raises(BattleRuleError):
        desk.submit(battle, AnswerJudged(at_ns=5, correct=True))
    assert desk.state(battle) is before and desk.store.count(BATTLE, battle) == 1


def test_a_duplicate_command_id_applies_once(desk):
    battle = desk.create(setup_event())
    desk.submit(battle, ThemeStarted(at_ns=10), command_id="tablet-1", result={"seq": 7})
    with pytest.raises(DuplicateCommandError) as again:
        desk.submit(battle, ThemeStarted(at_ns=11), command_id="tablet-1")
    assert again.value.stored.result == {"seq": 7}
    assert desk.state(battle).seq == 2 and desk.store.count(BATTLE, battle) == 2


def test_listeners_hear_only_stored_events(desk):
    heard = []
    desk.add_listener(lambda battle_id, event, state: heard.append((type(event).__name__,
                                                                    desk.store.count(BATTLE, battle_id))))
    battle = desk.create(setup_event())
    desk.submit(battle, ThemeStarted(at_ns=10))
    assert heard == [("BattleSetUp", 1), ("ThemeStarted", 2)]


def test_reopening_the_store_rebuilds_every_battle_by_replay(tmp_path):
    store = EventStore(tmp_path / "events.sqlite")
    desk = Battles(store)
    first = desk.create(setup_event())
    second = desk.create(setup_event("mubc", ("A", "B", "C", "D")))
    for event in (ThemeStarted(at_ns=10), PriceAnnounced(at_ns=11, value_points=10), ReadingStarted(at_ns=12),
                  ButtonPressed(at_ns=13, player=2)):
        desk.submit(first, event, command_id=f"c{event.at_ns}")
    desk.undo(first, at_ns=20)
    states = {battle: desk.state(battle) for battle in (first, second)}
    store.close()
    with EventStore(tmp_path / "events.sqlite") as reopened:
        again = Battles(reopened)
        assert {battle: again.state(battle) for battle in (first, second)} == states
        with pytest.raises(DuplicateCommandError):  # the command id survived the restart with its events
            again.submit(first, ThemeStarted(at_ns=99), command_id="c10")
        assert again.state(first) == states[first]


def test_concurrent_submits_keep_the_log_and_state_in_step(desk):
    battle = desk.create(setup_event())
    desk.submit(battle, ThemeStarted(at_ns=1))
    desk.submit(battle, PriceAnnounced(at_ns=2, value_points=10))

    def presses(player):
        for number in range(50):
            desk.submit(battle, ButtonPressed(at_ns=1000 + number * 10 + player, player=player))

    threads = [threading.Thread(target=presses, args=(player,)) for player in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert desk.store.count(BATTLE, battle) == 153 and desk.state(battle).seq == 153
    from appliance.rules.battle import replay
    assert replay(desk.store.events(BATTLE, battle)) == desk.state(battle)


def test_export_and_import_round_trip(desk):
    battle = desk.create(setup_event())
    desk.submit(battle, ThemeStarted(at_ns=10), command_id="a")
    text = desk.export(battle)
    copy = desk.import_log(io.StringIO(text), battle_id="copy")
    assert desk.state(copy) == desk.state(battle)


def test_unknown_battle(desk):
    with pytest.raises(UnknownBattleError):
        desk.submit("nope", ThemeStarted(at_ns=1))
    with pytest.raises(LookupError):
        desk.state("nope")


def test_the_second_run_of_a_slot_plays_the_same_themes(desk):
    first = desk.create(BattleSetUp(at_ns=0, profile=load_profile("youth-cup"), players=("А", "Б", "В"), themes=8,
                                    theme_names=tuple(f"Т{i}" for i in range(8)), slot="1/16-3", runs=2))
    second = desk.create_next_run(first, ("Г", "Д", "Е"), at_ns=100)
    setup = desk.state(second).setup
    assert (setup.run, setup.slot, setup.theme_names) == (2, "1/16-3", desk.state(first).setup.theme_names)
    with pytest.raises(BattleRuleError):  # youth-cup 2.4: two runs
        desk.create_next_run(second, ("Ж", "З", "И"), at_ns=200)
