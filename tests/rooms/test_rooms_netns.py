"""Rooms as network namespaces: real nats-servers and real ``svoyak run`` boxes, one per namespace, on one
bridge; tournaments played through the real session with the link cut, loss, a station killed, the hub
restarted, duplicates delivered and strangers refused (issue 13). Root only.

Checks: every event of every battle each station logged is at the hub once and in order (the hub's ledger holds
each battle up to the station's last seq, no gap), the desk's result of every battle equals the one recomputed
from the station's own log, a resend is dropped (by the stream, or by the hub), a stranger is refused.
"""

from __future__ import annotations

import os

import pytest

from tests.support import netns
from tests.support.netns_day import check_day, long_day, run_day

REASON = netns.can_run()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON)


def test_one_round_with_faults(tmp_path):
    """The quick day (./dev test): hub and two stations, a mubc round, the link cut, a station killed and
    restarted mid-battle, duplicates delivered, strangers refused."""
    day = run_day(tmp_path, ["s1", "s2"], [{"preset": "mubc", "players": 8, "rounds": 1}],
                  {"cut_s": 5, "kill": True, "duplicates": True, "stranger": True})
    assert set(day["faults"]) >= {"cut", "kill", "duplicates", "stranger"}
    check_day(day)
    assert day["pages"] == {"room_offers_start": True, "rooms_view_names_stations": True,
                            "lobby_names_stations": True, "rooms_view_online": True}
    assert day["duplicates"]["same_duplicate"] is True      # Nats-Msg-Id inside the window: dropped by the stream
    assert day["duplicates"]["fresh_duplicate"] is False    # a resend with another id reaches the hub...
    assert day["duplicates"]["hub_dropped"] >= 1            # ...and the hub's ledger drops it
    strangers = day["strangers"]
    for attempt in ("no_password", "guessed"):
        assert strangers[attempt]["refused"] is True, attempt                    # the hub says so to its face
        assert strangers[attempt]["assignments"].startswith("refused"), attempt  # and it reads nothing
    assert strangers["own_bucket"] == "read"
    assert strangers["other_bucket"].startswith("refused")
    assert strangers["claim_as_other"].startswith("refused")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SVOYAK_ROOMS_LONG"), reason="about 3 minutes: ./dev bench rooms_day, or "
                    "SVOYAK_ROOMS_LONG=1")
def test_northern_owl_and_mubc_over_three_rooms(tmp_path):
    long_day(tmp_path)
