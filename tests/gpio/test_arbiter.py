"""The arbiter alone: edges with explicit timestamps in, decisions out. No pins, no threads, no clock."""

from __future__ import annotations

import pytest

from gpio.arbiter import Arbiter

MS = 1_000_000
US = 1_000


def presses(outcome):
    return [(e["player"], e["status"]) for e in outcome.events if e["event"] == "press"]


def lockouts(outcome):
    return [e for e in outcome.events if e["event"] == "lockout"]


@pytest.fixture
def arbiter():
    a = Arbiter(players=4, debounce_ns=20 * MS, precision="mock")
    a.arm({1, 2, 3, 4}, "q1", now_ns=1_000 * MS, mode="linked")
    return a


def test_first_eligible_press_lights_its_led_and_beeps(arbiter):
    outcome = arbiter.edge(3, t_ns=1_500 * MS, pressed=True, arrival_ns=1_500 * MS + 80 * US)
    assert presses(outcome) == [(3, "won")]
    assert outcome.leds == (False, False, True, False) and outcome.beep
    (lockout,) = lockouts(outcome)
    assert lockout["winner"] == 3 and lockout["t_ns"] == 1_500 * MS and lockout["corrects"] is None


def test_presses_one_microsecond_apart_in_reverse_order_are_ordered_by_timestamp(arbiter):
    # Design principle 4: fair by timestamp, not by arrival. Player 2 pressed 1 µs before player 1, but
    # player 1's callback arrived first.
    t = 2_000 * MS
    first = arbiter.edge(1, t_ns=t + 1 * US, pressed=True, arrival_ns=t + 100 * US)
    second = arbiter.edge(2, t_ns=t, pressed=True, arrival_ns=t + 101 * US)
    assert presses(first) == [(1, "won")]
    assert presses(second) == [(2, "won")]
    (lockout,) = lockouts(second)
    assert lockout["winner"] == 2 and lockout["corrects"] == 1
    assert lockout["order"] == [{"player": 2, "t_ns": t, "gap_ns": 0}, {"player": 1, "t_ns": t + US, "gap_ns": US}]
    assert second.leds == (False, True, False, False)
    assert arbiter.winner == 2


def test_four_presses_in_scrambled_arrival_order_rank_by_timestamp(arbiter):
    t = 3_000 * MS
    stamps = {1: t + 3 * US, 2: t + 1 * US, 3: t + 4 * US, 4: t + 2 * US}
    for arrival, player in enumerate([3, 1, 4, 2]):
        last = arbiter.edge(player, t_ns=stamps[player], pressed=True, arrival_ns=t + MS + arrival)
    assert arbiter.winner == 2
    assert [entry["player"] for entry in lockouts(last)[-1]["order"]] == [2, 4, 1, 3]
    assert [entry["gap_ns"] for entry in lockouts(last)[-1]["order"]] == [0, US, 2 * US, 3 * US]


def test_later_presses_are_counted_with_rank_and_gap_from_the_winner(arbiter):
    # eurocup 2.9: after a wrong answer the next to have signalled answers; the UI shows "2nd: +0.034 s".
    t = 4_000 * MS
    arbiter.edge(1, t_ns=t, pressed=True, arrival_ns=t)
    outcome = arbiter.edge(4, t_ns=t + 34 * MS, pressed=True, arrival_ns=t + 34 * MS)
    (press,) = outcome.events
    assert press["status"] == "counted" and press["rank"] == 2 and press["gap_ns"] == 34 * MS
    assert outcome.leds is None and not outcome.beep  # the winner's LED stays


def test_equal_timestamps_are_a_flagged_tie_kept_by_the_first_arrival(arbiter):
    t = 5_000 * MS
    arbiter.edge(2, t_ns=t, pressed=True, arrival_ns=t + 10 * US)
    outcome = arbiter.edge(3, t_ns=t, pressed=True, arrival_ns=t + 11 * US)
    (press,) = [e for e in outcome.events if e["event"] == "press"]
    assert press["status"] == "counted" and press["tie"] and press["gap_ns"] == 0
    (lockout,) = lockouts(outcome)
    assert lockout["winner"] == 2 and lockout["tie"] and lockout["tied_with"] == [3] and lockout["corrects"] is None
    assert outcome.leds is None  # no flicker: the first arrival keeps the LED


def test_ineligible_press_is_reported_and_cannot_win(arbiter):
    arbiter.arm({1, 3}, "q1-after-wrong", now_ns=6_000 * MS, mode="linked")
    outcome = arbiter.edge(2, t_ns=6_001 * MS, pressed=True, arrival_ns=6_001 * MS)
    assert presses(outcome) == [(2, "ineligible")] and outcome.leds is None and not outcome.beep
    assert arbiter.winner is None
    assert presses(arbiter.edge(3, t_ns=6_002 * MS, pressed=True, arrival_ns=6_002 * MS)) == [(3, "won")]


def test_presses_while_disarmed_or_before_the_arm_time_are_disarmed(arbiter):
    arbiter.disarm()
    assert presses(arbiter.edge(1, t_ns=7_000 * MS, pressed=True, arrival_ns=7_000 * MS)) == [(1, "disarmed")]
    arbiter.edge(1, t_ns=7_100 * MS, pressed=False, arrival_ns=7_100 * MS)
    arbiter.arm({1, 2}, "q2", now_ns=8_000 * MS, mode="linked")
    # Stamped before the round was armed, delivered after: irkutsk 3.4, presses before "Минус" do not count.
    early = arbiter.edge(2, t_ns=8_000 * MS - 1, pressed=True, arrival_ns=8_000 * MS + 50 * US)
    assert presses(early) == [(2, "disarmed")] and arbiter.winner is None


def test_a_second_press_by_the_same_player_is_a_repeat(arbiter):
    arbiter.edge(1, t_ns=9_000 * MS, pressed=True, arrival_ns=9_000 * MS)
    arbiter.edge(1, t_ns=9_100 * MS, pressed=False, arrival_ns=9_100 * MS)
    outcome = arbiter.edge(1, t_ns=9_300 * MS, pressed=True, arrival_ns=9_300 * MS)
    assert presses(outcome) == [(1, "repeat")]


def test_bouncing_press_counts_its_first_edge_and_ignores_the_chatter(arbiter):
    t = 10_000 * MS
    first = arbiter.edge(2, t_ns=t, pressed=True, arrival_ns=t)
    chatter = [arbiter.edge(2, t_ns=t + k * 300 * US, pressed=k % 2 == 0, arrival_ns=t + k * 300 * US)
               for k in range(1, 12)]
    assert presses(first) == [(2, "won")]
    assert all(outcome.events == [] for outcome in chatter)
    assert arbiter.inputs[1].bounces == 5  # the five press edges inside the chatter
    (lockout,) = lockouts(first)
    assert lockout["t_ns"] == t  # never shifted to a later edge
    # A press after the button has been quiet for the debounce window is a new press (here: a repeat).
    arbiter.edge(2, t_ns=t + 200 * MS, pressed=False, arrival_ns=t + 200 * MS)
    assert presses(arbiter.edge(2, t_ns=t + 260 * MS, pressed=True, arrival_ns=t + 260 * MS)) == [(2, "repeat")]


def test_release_bounce_does_not_make_a_press(arbiter):
    t = 11_000 * MS
    arbiter.edge(4, t_ns=t, pressed=True, arrival_ns=t)
    arbiter.edge(4, t_ns=t + 150 * MS, pressed=False, arrival_ns=t + 150 * MS)
    bounce = arbiter.edge(4, t_ns=t + 150 * MS + 400 * US, pressed=True, arrival_ns=t + 151 * MS)
    assert bounce.events == []


def test_button_held_when_armed_is_stuck_and_cannot_win_until_released():
    arbiter = Arbiter(players=3, debounce_ns=20 * MS, precision="kernel")
    outcome = arbiter.arm({1, 2, 3}, "q1", now_ns=100 * MS, mode="linked", held=[2])
    assert [(e["event"], e["kind"], e["player"]) for e in outcome.events] == [("fault", "stuck", 2)]
    assert arbiter.stuck == {2}
    released = arbiter.edge(2, t_ns=300 * MS, pressed=False, arrival_ns=300 * MS)
    assert [(e["kind"], e["player"]) for e in released.events] == [("stuck-cleared", 2)]
    assert presses(arbiter.edge(2, t_ns=400 * MS, pressed=True, arrival_ns=400 * MS)) == [(2, "won")]


def test_press_edge_while_stuck_is_reported_stuck():
    arbiter = Arbiter(players=2, debounce_ns=0, precision="kernel")
    arbiter.arm({1, 2}, "q1", now_ns=0, mode="linked", held=[1])
    # The release edge was lost (a missed interrupt): the player is still stuck and cannot win.
    arbiter.inputs[0].held = False
    assert presses(arbiter.edge(1, t_ns=10 * MS, pressed=True, arrival_ns=10 * MS)) == [(1, "stuck")]
    assert arbiter.winner is None


def test_button_test_mode_lights_each_led_while_its_button_is_held(arbiter):
    arbiter.set_button_test(True)
    on = arbiter.edge(3, t_ns=12_000 * MS, pressed=True, arrival_ns=12_000 * MS)
    assert presses(on) == [(3, "test")] and on.leds == (False, False, True, False) and on.beep
    both = arbiter.edge(1, t_ns=12_010 * MS, pressed=True, arrival_ns=12_010 * MS)
    assert both.leds == (True, False, True, False)
    off = arbiter.edge(3, t_ns=12_200 * MS, pressed=False, arrival_ns=12_200 * MS)
    assert off.leds == (True, False, False, False)
    assert arbiter.set_button_test(False).leds == (False,) * 4


def test_arm_turns_leds_off_and_starts_a_fresh_round(arbiter):
    arbiter.edge(1, t_ns=13_000 * MS, pressed=True, arrival_ns=13_000 * MS)
    outcome = arbiter.arm({2, 3}, "q2", now_ns=13_500 * MS, mode="linked")
    assert outcome.leds == (False,) * 4 and arbiter.winner is None and arbiter.round_id == "q2"


def test_bad_player_numbers_are_refused():
    arbiter = Arbiter(players=2, debounce_ns=0, precision="mock")
    with pytest.raises(ValueError, match="outside 1-2"):
        arbiter.arm({1, 3}, "q", now_ns=0, mode="linked")
    with pytest.raises(ValueError):
        arbiter.edge(0, t_ns=0, pressed=True, arrival_ns=0)


def test_pins_read_at_arm_time_override_a_missed_release_edge():
    arbiter = Arbiter(players=2, debounce_ns=20 * MS, precision="kernel")
    arbiter.arm({1, 2}, "q0", now_ns=0, mode="linked")
    arbiter.edge(1, t_ns=10 * MS, pressed=True, arrival_ns=10 * MS)  # its release edge never arrives
    outcome = arbiter.arm({1, 2}, "q1", now_ns=500 * MS, mode="linked", held=[])
    assert outcome.events == [] and arbiter.stuck == set()  # the pin says released: not stuck
    assert presses(arbiter.edge(1, t_ns=600 * MS, pressed=True, arrival_ns=600 * MS)) == [(1, "won")]


def test_eligible_set_changes_without_restarting_the_round(arbiter):
    t = 14_000 * MS
    arbiter.edge(1, t_ns=t, pressed=True, arrival_ns=t)
    outcome = arbiter.set_eligible({2, 3})  # e.g. player 4 left the table
    assert outcome.leds is None and arbiter.winner == 1 and arbiter.round_id == "q1"
    assert presses(arbiter.edge(4, t_ns=t + 5 * MS, pressed=True, arrival_ns=t + 5 * MS)) == [(4, "ineligible")]
    assert presses(arbiter.edge(3, t_ns=t + 6 * MS, pressed=True, arrival_ns=t + 6 * MS)) == [(3, "counted")]


def test_a_counted_press_arriving_late_but_stamped_earlier_reorders_the_queue(arbiter):
    # eurocup 2.9: the next to answer is the next to have signalled, by timestamp.
    t = 15_000 * MS
    arbiter.edge(1, t_ns=t, pressed=True, arrival_ns=t)
    in_order = arbiter.edge(3, t_ns=t + 2 * US, pressed=True, arrival_ns=t + 50 * US)
    assert lockouts(in_order) == []  # appended at the end: the press event's rank 2 is right
    late = arbiter.edge(2, t_ns=t + 1 * US, pressed=True, arrival_ns=t + 60 * US)
    (press,) = [e for e in late.events if e["event"] == "press"]
    assert press["rank"] == 2
    (lockout,) = lockouts(late)
    assert lockout["winner"] == 1 and lockout["corrects"] is None
    assert [o["player"] for o in lockout["order"]] == [1, 2, 3]


def test_any_arrival_order_ends_with_the_timestamp_order():
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.permutations([1, 2, 3, 4]), st.lists(st.integers(0, 5), min_size=4, max_size=4))
    def check(arrival_order, offsets_us):
        arbiter = Arbiter(players=4, debounce_ns=20 * MS, precision="mock")
        arbiter.arm({1, 2, 3, 4}, "q", now_ns=0, mode="linked")
        stamps = {player: MS + offsets_us[player - 1] * US for player in (1, 2, 3, 4)}
        last_lockout = None
        for arrival, player in enumerate(arrival_order):
            outcome = arbiter.edge(player, t_ns=stamps[player], pressed=True, arrival_ns=2 * MS + arrival)
            last_lockout = (lockouts(outcome) or [last_lockout])[-1]
        earliest = min(stamps.values())
        first_arrived_of_earliest = next(p for p in arrival_order if stamps[p] == earliest)
        # The earliest timestamp wins; among equal earliest stamps, the first to arrive (the tie rule).
        assert arbiter.winner == first_arrived_of_earliest
        assert arbiter.leds == tuple(p == arbiter.winner for p in (1, 2, 3, 4))
        assert last_lockout["winner"] == arbiter.winner
        published = [o["t_ns"] for o in last_lockout["order"]]
        assert published == sorted(published)  # every published order is the timestamp order
        assert [t for t, _, _ in arbiter._ranked] == sorted(stamps.values())
        assert last_lockout["tie"] == (list(stamps.values()).count(earliest) > 1)

    check()
