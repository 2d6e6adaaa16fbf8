"""The stateful adversary, bounded: random sequences of host taps (on the real host page in Chromium), refused
commands, presses through the capture, audience connections and reconnects, server and capture restarts and
SIGKILLs, package setups (.siq, db.chgk.info, CSV) and undo, on a real box; after every step the box's promises
are checked (bench/adversary.py: a tap applied once or refused in words, the view after a restart the view before,
no secret to the audience, undo takes back one intent, the log replays to what the host sees).

``./dev bench chaos`` runs the same machine for 30 minutes and prints its figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.adversary import CHROMIUM, FOUND, Figures, close_browser, launch_browser, machine, play_steps

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def chromium():
    pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (./dev test installs it)")
    handles = launch_browser()
    yield handles[1]
    close_browser(handles)


def test_the_box_keeps_its_promises_under_random_sequences(chromium, tmp_path):
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.stateful import run_state_machine_as_test

    figures = Figures()
    BoxMachine = machine(chromium, figures, tmp_path)
    try:
        run_state_machine_as_test(BoxMachine, settings=settings(
            max_examples=3, stateful_step_count=25, deadline=None,
            database=DirectoryBasedExampleDatabase(ROOT / ".hypothesis" / "adversary"),
            # each example is a real box (two processes and a page): shrinking would replay dozens of them
            phases=(Phase.explicit, Phase.reuse, Phase.generate),
            # a real box fails where it likes: hunting a second bug would replay prefixes of the failing example,
            # and a replay that fails one step later is hypothesis's FlakyStrategyDefinition, hiding the first
            report_multiple_bugs=False,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]))
    finally:
        print(figures)
    assert figures.steps >= 3 * 10, figures  # the boxes were driven: steps were taken and checked


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_sequences_the_adversary_found_keep_the_promises(chromium, tmp_path, name):
    figures = play_steps(chromium, tmp_path, FOUND[name])
    assert figures.steps == len(FOUND[name]) + 1, figures
    declined = sum(action == "withdraw_declined" for action, *_ in FOUND[name])
    assert figures.withdrawals_declined == declined, figures  # each confirmation opened and was answered no
