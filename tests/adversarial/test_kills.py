"""The adversary, bounded: scripted battles on a real box (web server and capture process) with SIGKILLs at
random moments and resend storms across the restarts; every acknowledged command is then checked in the store.
``./dev bench chaos`` plays a longer game and prints the same figures."""

from __future__ import annotations

import pytest

from bench.chaos import play

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", [20261201])
def test_kills_and_resend_storms_lose_nothing_and_double_nothing(tmp_path, seed):
    figures = play(tmp_path, commands=70, kills=8, seed=seed)
    print(figures)
    assert figures.server_kills + figures.capture_kills >= 8, figures
    assert figures.server_kills >= 1 and figures.commands_acknowledged >= 70, figures
    # the final storm resent every acknowledged command: each answered duplicate (or, on a loaded machine, not
    # at all within 45 s: never answered otherwise)
    assert figures.duplicates_answered + figures.unanswered_resends >= figures.commands_acknowledged, figures
    assert figures.duplicates_answered >= figures.commands_acknowledged // 2, figures
    assert (figures.lost, figures.doubled, figures.wrong_events, figures.wrong_resend_answers) == (0, 0, 0, 0), \
        figures
    assert figures.problems == [], figures
