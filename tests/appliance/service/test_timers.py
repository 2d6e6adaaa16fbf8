"""The deadlines thread outlives any deadline: one no clock reaches, one that fails, a wrong type."""

from __future__ import annotations

import threading
import time

import pytest

from appliance.service.timers import Deadlines


def test_a_deadline_no_clock_reaches_does_not_stop_the_thread_and_later_deadlines_still_fire():
    deadlines = Deadlines().start()
    try:
        deadlines.set("answer", 10**30, lambda key, at_ns: None)  # extend {extra_ms: 10**30}, before the bound
        time.sleep(0.05)  # let the thread take it in (no assert on time: the event below is what is checked)
        fired = threading.Event()
        deadlines.set("press_window", time.monotonic_ns(), lambda key, at_ns: fired.set())
        assert fired.wait(timeout=10), "the deadlines thread died"
        assert deadlines._thread.is_alive() and deadlines.pending() == {"answer": 10**30}
    finally:
        deadlines.close()


def test_a_failing_deadline_does_not_stop_the_next_one():
    now = [0]
    deadlines = Deadlines(clock=lambda: now[0])
    fired = []

    def boom(key, at_ns):
        raise RuntimeError("a bug in one expiry")

    deadlines.set("a", 5, boom)
    deadlines.set("b", 6, lambda key, at_ns: fired.append(key))
    now[0] = 10
    assert deadlines.run_due() == 2 and fired == ["b"]


@pytest.mark.parametrize("at_ns", [1.5, float("inf"), True, "7", None])
def test_a_deadline_is_a_whole_number_of_ns(at_ns):
    deadlines = Deadlines(clock=lambda: 0)
    with pytest.raises(TypeError):
        deadlines.set("press_window", at_ns, lambda key, at_ns: None)
    assert deadlines.pending() == {}
