"""The live session, played as a battle: host commands, button presses through the capture link, the press
window's deadline, numbered updates. Real engine, in-memory store, a clock moved by hand, no threads."""

from __future__ import annotations

import json

import pytest

from appliance.rules.battle import BattleRuleError
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.session import SEAT_CODE_DIGITS, CommandRejected, Session, diff
from appliance.service.timers import Deadlines
from appliance.store import BATTLE

from .conftest import setup_args


def command(session, name, **args):
    session.command_counter = getattr(session, "command_counter", 0) + 1
    return session.command(name, args, f"c{session.command_counter}")


def test_a_question_played_through_buttons(session, capture, clock):
    command(session, "setup", **setup_args())
    assert capture.commands[-1] == ("disarm",)
    command(session, "next")                      # theme "Реки"
    command(session, "next")                      # price 10 and reading starts
    # eurocup 2.5: a signal may come from the price announcement: every player armed (the capture counts from 1)
    assert capture.commands[-1][:2] == ("arm", (1, 2, 3))
    clock.advance(1500)
    capture.press(2, t_ns=clock.now_ns - 300_000)          # Борис, 0.3 ms before the callback ran
    capture.press(3, t_ns=clock.now_ns - 100_000, status="counted")
    view = session.snapshot()["view"]
    assert view["answerer"] == 1
    assert [p["player"] for p in view["presses"]] == [1, 2]
    assert view["presses"][1]["gap_ms"] == pytest.approx(0.2)
    assert view["presses"][0]["t_ns"] == clock.now_ns - 300_000   # the kernel timestamp, kept end to end
    command(session, "point")
    command(session, "right")
    view = session.snapshot()["view"]
    assert [p["score"] for p in view["players"]] == [0, 10, 0]   # eurocup 2.3
    assert capture.commands[-1] == ("disarm",)


def test_the_press_window_expires_at_its_deadline_not_when_the_timer_woke(session, clock):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    command(session, "reading_done")
    closes = session.state.press_window_closes_ns
    assert closes == clock.now_ns + 7000 * 10**6                  # eurocup 2.5: 7 s after the reading ends
    clock.advance(6999)
    assert session.deadlines.run_due() == 0
    clock.advance(50)                                           # the timer woke 49 ms late
    assert session.deadlines.run_due() == 1
    assert session.state.questions[-1].outcome == "unanswered"  # eurocup 2.11.3
    assert session.state.questions[-1].ended_ns == closes + 1  # the first instant after the 7 s (eurocup 2.5)


def test_a_stale_deadline_feeds_nothing(session, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    command(session, "reading_done")
    clock.advance(1000)
    capture.press(1, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "right")                                   # the question ended before the window closed
    clock.advance(10_000)
    session.deadlines.run_due()
    assert session.state.questions[-1].outcome == "right"


def test_updates_are_numbered_without_gaps_and_carry_only_changes(session):
    start = session.seq
    command(session, "setup", **setup_args())
    command(session, "next")
    numbers = [update["seq"] for update in session.updates]
    assert numbers == list(range(1, session.seq + 1))
    assert session.seq > start
    last = session.updates[-1]
    assert "players" not in last["changes"]                     # unchanged keys are not resent
    assert last["event"]["type"] == "ThemeStarted"


def test_a_later_update_leaves_an_earlier_one_unchanged(session, capture, clock):
    # Updates carry the view's own values, uncopied: only safe because every view is built fresh and never
    # mutated after. Kept updates must read the same after the battle has moved on (a slow subscriber's queue).
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    clock.advance(800)
    capture.press(2, t_ns=clock.now_ns)
    kept = [(update, json.dumps(update, sort_keys=True)) for update in session.updates]
    command(session, "point")
    command(session, "wrong")
    clock.advance(300)
    capture.press(1, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "right")
    command(session, "correct", question=0, player=1, correct=True)
    command(session, "undo")
    command(session, "next")
    command(session, "reading_done")
    clock.advance(10_000)
    session.deadlines.run_due()
    assert len(session.updates) > len(kept) + 8
    for update, text in kept:
        assert json.dumps(update, sort_keys=True) == text


def test_a_snapshot_is_the_callers_own_copy(session, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    before = json.dumps(session.snapshot(), sort_keys=True)
    mine = session.snapshot()["view"]
    mine["players"][1]["score"] = 999
    mine["allowed"]["right"] = None
    mine["themes"][0]["played"].append(40)
    mine["presses"].append({"player": 0})
    again = session.snapshot()
    again["server_now_ns"] = json.loads(before)["server_now_ns"]
    assert json.dumps(again, sort_keys=True) == before
    clock.advance(500)
    capture.press(2, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "right")
    # the diffs still start from the session's own view, not from the edited copy
    assert session.updates[-1]["changes"]["players"][1]["score"] == 10
    assert session.snapshot()["view"]["themes"][0]["played"] == [10]


def test_a_repeated_command_id_is_applied_once(session):
    command(session, "setup", **setup_args())
    first = session.command("next", {}, "tap-1")
    again = session.command("next", {}, "tap-1")                 # a resend after a lost ack, or a double tap
    assert again == {**first, "duplicate": True}
    assert len(session.state.themes) == 1


def test_a_command_the_rules_refuse_changes_nothing(session):
    command(session, "setup", **setup_args())
    before = session.seq, session.state
    with pytest.raises(BattleRuleError) as refused:
        command(session, "right")                               # nobody is answering
    assert refused.value.rule == "eurocup 2.6"
    assert (session.seq, session.state) == before


def test_commands_before_a_battle_and_unknown_commands_are_refused(session):
    with pytest.raises(CommandRejected) as refused:
        command(session, "next")
    assert refused.value.code == "error.no_battle"
    command(session, "setup", **setup_args())
    with pytest.raises(CommandRejected) as refused:
        command(session, "dance")
    assert refused.value.code == "error.unknown_command"


def test_allowed_commands_come_from_the_engine(session):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    allowed = session.snapshot()["view"]["allowed"]
    assert allowed["reading_done"] is None
    assert allowed["right"]["rule"] == "eurocup 2.6"            # nobody answers yet, and the page says why
    assert allowed["right"]["ru"] == "Никто не отвечает — сначала укажите отвечающего (2.6)"
    assert allowed["clarify"]["rule"].startswith("eurocup")     # eurocup has no "уточните"


def test_phone_presses_only_when_the_host_enables_them(session, clock):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    with pytest.raises(CommandRejected) as refused:
        session.phone_press(0, "p1", "0000")
    assert refused.value.code == "error.phones_off"
    command(session, "phones", enabled=True)
    code = session.snapshot()["view"]["seat_codes"][0]
    result = session.phone_press(0, "p2", code)
    assert result["counted"]
    assert session.phone_press(0, "p2", code)["duplicate"]
    assert session.snapshot()["view"]["presses"][0]["source"] == "phone"


def test_enabling_phones_makes_one_fresh_code_per_seat_off_the_battle_log(session, memory_battles):
    command(session, "setup", **setup_args(profile="irkutsk", players=("Аня", "Борис", "Вера", "Глеб")))
    assert session.snapshot()["view"]["seat_codes"] is None                 # phones off: no codes at all
    logged = memory_battles.store.count(BATTLE, session.battle_id)
    command(session, "phones", enabled=True)
    codes = session.snapshot()["view"]["seat_codes"]
    assert len(codes) == 4 and len(set(codes)) == 4                         # one per seat, distinct
    assert all(len(code) == SEAT_CODE_DIGITS == 6 and code.isdigit() for code in codes)
    assert session.updates[-1]["event"] == {"type": "PhonesEnabled"}        # the update names no code
    command(session, "phones", enabled=True)                                # already on (a resend): kept
    assert session.snapshot()["view"]["seat_codes"] == codes
    command(session, "phones", enabled=False)
    assert session.snapshot()["view"]["seat_codes"] is None
    command(session, "phones", enabled=True)
    fresh = session.snapshot()["view"]["seat_codes"]
    assert all(new != old for new, old in zip(fresh, codes))                # every old code is dead
    assert memory_battles.store.count(BATTLE, session.battle_id) == logged          # access control, not battle events
    command(session, "setup", **setup_args(players=("Дима", "Женя")), set_aside=session.battle_id)  # new seats, codes
    assert len(session.snapshot()["view"]["seat_codes"]) == 2
    assert not set(session.snapshot()["view"]["seat_codes"]) & set(fresh[:2])


def test_a_wrong_or_stale_seat_code_changes_nothing(session):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    command(session, "phones", enabled=True)
    old = session.snapshot()["view"]["seat_codes"]
    command(session, "phones", enabled=False)
    command(session, "phones", enabled=True)
    codes = session.snapshot()["view"]["seat_codes"]
    before, updates = session.snapshot(), len(session.updates)
    wrong = str((int(codes[1]) + 1) % 10000).zfill(4)
    for player, code in ((1, wrong), (1, old[1]), (1, codes[0]), (1, ""), (7, codes[1]), (-1, codes[2])):
        with pytest.raises(CommandRejected) as refused:
            session.phone_press(player, f"p-{player}-{code}", code)
        assert refused.value.code == "error.seat_code", (player, code)
        with pytest.raises(CommandRejected):
            session.check_seat_code(player, code)
    after = session.snapshot()
    assert (after["seq"], after["view"]) == (before["seq"], before["view"]) and len(session.updates) == updates
    session.check_seat_code(1, codes[1])                                    # the right one: no refusal
    assert session.phone_press(1, "p-right", codes[1])["counted"]
    assert session.snapshot()["view"]["answerer"] == 1


def test_the_simulator_presses_through_the_capture_link(session, capture):
    session.simulate(0, "press")
    session.simulate(0, "release")
    assert capture.commands[-2:] == [("sim_press", 1), ("sim_release", 1)]
    capture.connected = False
    with pytest.raises(CommandRejected):
        session.simulate(0, "press")


def test_capture_link_state_shows_in_the_view(session, capture):
    session.on_capture_connection(False)
    assert session.snapshot()["view"]["capture"]["connected"] is False
    session.on_capture_connection(True)
    assert session.snapshot()["view"]["capture"]["connected"] is True


def test_diff_marks_removed_keys_apart_from_null_values():
    assert diff({"a": 1, "b": 2}, {"a": None}) == ({"a": None}, ["b"])


def test_on_claps_the_host_picks_the_answerer_and_the_buttons_rest(session, capture):
    """mubc 4.4: with the buttons failed, the host points to whoever he saw first."""
    command(session, "setup", **setup_args(profile="mubc", players=("Аня", "Борис", "Вера", "Глеб")))
    command(session, "claps", on=True)
    command(session, "next")
    command(session, "next")
    assert capture.commands[-1] == ("disarm",)                 # no button judges anything "on claps"
    view = session.snapshot()["view"]
    assert view["battle"]["on_claps"] and view["allowed"]["pick"] is None
    command(session, "pick", player=3)
    command(session, "right")
    assert session.state.scores == (0, 0, 0, 10)


def test_the_button_test_goes_to_the_capture_and_the_battle_rearms_after_it(session, capture):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    command(session, "button_test", on=True)
    assert capture.commands[-1] == ("button_test", True)
    assert session.snapshot()["view"]["button_test"] is True
    command(session, "button_test", on=False)
    assert capture.commands[-2] == ("button_test", False)
    assert capture.commands[-1][:2] == ("arm", (1, 2, 3))     # the question goes on
    capture.connected = False
    with pytest.raises(CommandRejected) as refused:
        command(session, "button_test", on=True)
    assert refused.value.code == "error.capture_down"


def test_a_new_session_resumes_the_unfinished_battle(session, memory_battles, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "next")
    again = Session(memory_battles, BattleAdapter(), capture=capture, clock=clock, deadlines=Deadlines(clock))
    again.start(timer_thread=False)
    assert again.battle_id == session.battle_id
    assert again.snapshot()["view"]["theme"]["name"] == "Реки"


def test_the_answer_countdown_refreshes_the_view_once_and_lets_the_host_call_time(session, capture, clock):
    """eurocup 2.8: 3 s to answer; then "Время" is allowed. The refresh happens once, not in a loop."""
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    capture.press(1, t_ns=clock.now_ns)
    command(session, "point")
    assert session.snapshot()["view"]["allowed"]["time"]["rule"] == "eurocup 2.8"
    clock.advance(3001)
    assert session.deadlines.run_due() == 1
    assert session.deadlines.run_due() == 0                    # not scheduled again
    view = session.snapshot()["view"]
    assert view["allowed"]["time"] is None and view["expired"] == ["answer"]
    command(session, "time")
    assert session.state.scores == (-10, 0, 0)                 # wrong by time
    assert session.snapshot()["view"]["expired"] == []


def test_the_capture_status_reaches_every_page_so_a_fallback_factory_is_announced(session, capture):
    """issue 3: on RPi.GPIO (old Pis) presses are stamped in the callback; the pages say timing is less precise."""
    session.on_capture_event({"event": "status", "seq": next(capture.seq), "mode": "linked", "factory": "rpigpio",
                              "precision": "callback", "degraded": ["RPi.GPIO: no kernel edge timestamps"],
                              "simulator": False, "stuck": []})
    capture_view = session.snapshot()["view"]["capture"]
    assert capture_view["connected"] and capture_view["precision"] == "callback"
    assert capture_view["degraded"] == ["RPi.GPIO: no kernel edge timestamps"]


def test_a_huge_extension_is_refused_by_code_and_the_deadlines_keep_running(session, capture, clock):
    """issue 10: ``extend {extra_ms: 10**30}`` killed the deadlines thread; the engine bounds it now (northern-owl
    3.7, the profile's extension_max_ms) and a non-number is a bad command, never a crash."""
    live = session
    command(live, "setup", **setup_args(profile="northern-owl"))
    command(live, "next"); command(live, "next")
    clock.advance(500)
    capture.press(1, t_ns=clock.now_ns)
    command(live, "point")
    with pytest.raises(CommandRejected) as rejected:  # the session's edge bounds any figure first...
        command(live, "extend", extra_ms=10**30)
    assert rejected.value.code == "error.argument_range"
    with pytest.raises(BattleRuleError) as refused:  # ...and the engine by the profile (a minute at most)
        command(live, "extend", extra_ms=60_001)
    assert refused.value.code == "extension_too_long" and refused.value.rule == "northern-owl 3.7"
    for junk in (float("inf"), float("nan"), "много", [1]):
        with pytest.raises(CommandRejected) as rejected:
            command(live, "extend", extra_ms=junk)
        assert rejected.value.code.startswith("error.")
    assert all(at_ns < 10**15 for at_ns in live.deadlines.pending().values())


def _play_to_minus_20_20_40(session, capture, clock):
    """Mid-theme at −20/20/40, the issue's example: Аня wrong on 20, Борис right on 20, Вера right on 40."""
    command(session, "setup", **setup_args())
    command(session, "next")                                     # theme «Реки»
    for price, answers in ((10, ()), (20, ((1, False), (2, True))), (30, ()), (40, ((3, True),))):
        command(session, "next")
        for player, right in answers:
            clock.advance(100)
            capture.press(player, t_ns=clock.now_ns)
            command(session, "point")
            command(session, "right" if right else "wrong")
        if not answers:
            command(session, "reading_done")
            clock.advance(7001)
            session.deadlines.run_due()
    assert [p["score"] for p in session.snapshot()["view"]["players"]] == [-20, 20, 40]


def test_an_unfinished_battle_is_never_replaced_silently(session, capture, clock):
    _play_to_minus_20_20_40(session, capture, clock)
    first = session.battle_id
    seq = session.seq
    with pytest.raises(CommandRejected) as refused:
        command(session, "setup", **setup_args(players=("Дима", "Женя")))
    assert refused.value.code == "error.battle_unfinished"
    assert session.battle_id == first and session.seq == seq      # nothing changed
    with pytest.raises(CommandRejected):                           # naming another battle is no choice either
        command(session, "setup", **setup_args(players=("Дима", "Женя")), set_aside="b99")

    # The host saw it and set it aside: the new battle is live, the old one listed first (unfinished), with scores.
    command(session, "setup", **setup_args(players=("Дима", "Женя")), set_aside=first)
    second = session.battle_id
    assert second != first
    listed = session.snapshot()["view"]["battles"]
    assert [(b["id"], b["current"], b["finished"]) for b in listed] == [(second, True, False), (first, False, False)]
    old = listed[1]
    assert [(p["name"], p["score"]) for p in old["players"]] == [("Аня", -20), ("Борис", 20), ("Вера", 40)]
    assert (old["themes"], old["themes_started"], old["questions"], old["theme_name"]) == (4, 1, 4, "Реки")
    assert listed[0]["players"][0]["score"] is None                # the live one's scores are in view.players

    # Any battle can be resumed, as its log left it (the live unfinished one is set aside by name, again).
    with pytest.raises(CommandRejected) as refused:
        command(session, "resume", battle=first)
    assert refused.value.code == "error.battle_unfinished"
    command(session, "resume", battle=first, set_aside=second)
    view = session.snapshot()["view"]
    assert session.battle_id == first
    assert [p["score"] for p in view["players"]] == [-20, 20, 40]
    assert view["theme"]["name"] == "Реки"
    command(session, "next")                                       # and the battle goes on: 50 is next
    assert session.state.questions[-1].value_points == 50
    with pytest.raises(CommandRejected) as refused:
        command(session, "resume", battle="nope")
    assert refused.value.code == "error.no_such_battle"


def test_a_finished_battle_makes_way_without_a_question(session, capture, clock):
    command(session, "setup", **setup_args(themes=("Реки",)))
    command(session, "next")
    for _ in range(5):
        command(session, "next")
        clock.advance(100)
        capture.press(1, t_ns=clock.now_ns)
        command(session, "point")
        command(session, "right")
    assert session.state.is_over
    finished = session.battle_id
    command(session, "setup", **setup_args(players=("Дима", "Женя")))
    listed = session.snapshot()["view"]["battles"]
    assert [(b["id"], b["finished"]) for b in listed] == [(session.battle_id, False), (finished, True)]
    assert listed[1]["players"][0] == {"name": "Аня", "score": 150}


def test_a_correction_is_announced_with_the_scores_it_moved_and_the_answer_it_voided(session, capture, clock):
    command(session, "setup", **setup_args(themes=("Реки",)))
    command(session, "next")
    command(session, "next")                                      # 10
    clock.advance(100)
    capture.press(1, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "wrong")                                     # Аня −10
    clock.advance(100)
    capture.press(2, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "right")                                     # Борис +10
    assert session.snapshot()["view"]["announcement"] is None    # a ruling is no news: the board shows it anyway
    command(session, "correct", question=0, player=0, correct=True, reason="синоним")
    told = session.snapshot()["view"]["announcement"]
    assert told["kind"] == "correction" and told["name"] == "Аня" and (told["was"], told["now"]) == (False, True)
    assert told["question"] == {"index": 0, "theme": 0, "theme_name": "Реки", "theme_shootout": False, "price": 10}
    assert told["scores"] == [{"player": 0, "name": "Аня", "old": -10, "new": 10},
                              {"player": 1, "name": "Борис", "old": 10, "new": 0}]
    assert told["voided"] == [{"player": 1, "name": "Борис"}]     # eurocup 2.11.1: the question ended with Аня
    assert told["void_section"] == "2.11" and told["section"] is None   # eurocup names no correction procedure
    assert told["reason"] == "синоним"
    board = [update for update in session.updates if "announcement" in update["changes"]][-1]
    assert board["changes"]["announcement"] == told               # every role hears it (the board above all)
    command(session, "next")                                      # 20: old news
    assert session.snapshot()["view"]["announcement"] is None


def test_an_appeals_decision_is_announced_with_its_section(session, capture, clock):
    command(session, "setup", **setup_args(profile="mubc", players=("Аня", "Борис", "Вера", "Гена"), themes=("Реки",)))
    command(session, "next")
    command(session, "next")
    command(session, "reading_done")
    clock.advance(100)
    capture.press(1, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "wrong")
    for _ in range(3):                                            # nobody else presses: the question ends
        clock.advance(10_000)
        session.deadlines.run_due()
    assert session.state.questions[0].is_over
    command(session, "appeal", question=0, player=0, claim="ответ верный")  # mubc 4.2: before the next question
    command(session, "appeal_decide", appeal=0, accepted=False)
    told = session.snapshot()["view"]["announcement"]
    assert (told["kind"], told["section"], told["scores"], told["claim"]) == ("appeal_rejected", "4.2", [], "ответ верный")
    with pytest.raises(BattleRuleError):                          # mubc 4.2: a decision is final, undo included
        command(session, "undo")
    assert session.snapshot()["view"]["announcement"]["kind"] == "appeal_rejected"
    command(session, "next")                                      # the next question: old news
    assert session.snapshot()["view"]["announcement"] is None


def test_the_button_test_shows_whose_buttons_work_and_ends_when_a_question_starts(session, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "button_test", on=True)
    capture.press(2, t_ns=clock.now_ns, status="test")             # Борис's button lights: it works
    capture.press(2, t_ns=clock.now_ns + 1, status="test")
    view = session.snapshot()["view"]
    assert view["button_test"] is True and view["button_test_pressed"] == [1]
    assert session.state.questions == ()                              # a test press is no battle event
    command(session, "next")                                          # the theme: the test may go on
    assert session.snapshot()["view"]["button_test"] is True
    command(session, "next")                                          # the 10 is announced: the test ends itself
    ended = capture.commands.index(("button_test", False))
    assert capture.commands[-1][0] == "arm" and ended < len(capture.commands) - 1   # then the question is armed
    view = session.snapshot()["view"]
    assert view["button_test"] is False and view["button_test_pressed"] == []
    assert session.updates[-1]["event"]["type"] == "ReadingStarted"  # one update: the question's, test over
    clock.advance(100)
    capture.press(3, t_ns=clock.now_ns)                               # and the presses count again
    assert session.snapshot()["view"]["answerer"] == 2


def test_a_refused_command_leaves_the_button_test_on(session, capture):
    command(session, "setup", **setup_args())
    command(session, "button_test", on=True)
    with pytest.raises(BattleRuleError):
        command(session, "right")
    assert session.snapshot()["view"]["button_test"] is True


def test_phones_stay_on_with_their_codes_across_a_restart(session, memory_battles, capture, clock):
    # Found by the stateful adversary (bench/adversary.py): after a restart of the web server the host's
    # «Включить телефоны-кнопки» was undone behind his back, and every player's phone stopped pressing.
    command(session, "setup", **setup_args())
    command(session, "phones", enabled=True)
    codes = session.snapshot()["view"]["seat_codes"]
    again = Session(memory_battles, BattleAdapter(), capture=capture, clock=clock, deadlines=Deadlines(clock))
    again.start(timer_thread=False)
    view = again.snapshot()["view"]
    assert (view["phones_enabled"], view["seat_codes"]) == (True, codes)
    again.check_seat_code(1, codes[1])                                      # the phone from before still presses
    again.command("phones", {"enabled": False}, "off")
    third = Session(memory_battles, BattleAdapter(), capture=capture, clock=clock, deadlines=Deadlines(clock))
    third.start(timer_thread=False)
    assert (third.snapshot()["view"]["phones_enabled"], third.snapshot()["view"]["seat_codes"]) == (False, None)


def test_phones_of_another_battle_do_not_come_back_on_a_restart(session, memory_battles, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "phones", enabled=True)
    first = session.battle_id
    memory_battles.set_meta("phones", json.dumps({"battle": "not-" + first, "enabled": True, "codes": ["1"] * 3}))
    again = Session(memory_battles, BattleAdapter(), capture=capture, clock=clock, deadlines=Deadlines(clock))
    again.start(timer_thread=False)
    assert again.snapshot()["view"]["phones_enabled"] is False


def test_the_halls_announcement_is_the_same_after_a_restart(session, memory_battles, capture, clock):
    # Found by the stateful adversary (bench/adversary.py, ./dev bench chaos): a battle set aside was announced to
    # the hall («…отложен», its scores), and a restart of the web server took the announcement off the board.
    command(session, "setup", **setup_args())
    command(session, "next")
    first = session.battle_id
    command(session, "setup", set_aside=first, **setup_args())
    told = session.snapshot()["view"]["announcement"]
    assert told["kind"] == "set_aside"
    again = Session(memory_battles, BattleAdapter(), capture=capture, clock=clock, deadlines=Deadlines(clock))
    again.start(timer_thread=False)
    assert json.loads(json.dumps(again.snapshot()["view"]["announcement"])) == json.loads(json.dumps(told))
    # the next question ends it, and a restart after that tells nothing
    again.command("next", {}, "n2")
    assert again.snapshot()["view"]["announcement"] is None
    third = Session(memory_battles, BattleAdapter(), capture=capture, clock=clock, deadlines=Deadlines(clock))
    third.start(timer_thread=False)
    assert third.snapshot()["view"]["announcement"] is None
