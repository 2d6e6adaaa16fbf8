"""A youth-cup day in the rooms over a Wi-Fi-like link (issue 22), the desk moved to the standby mid-day: real boxes
(``svoyak run --simulator``) in network namespaces as tests/rooms/test_rooms_netns.py has them, a standby desk
beside the hub, and on every station's venue link the profile of tests/rooms/wifi.py (delay 5-40 ms with
jitter, 2 % loss in bursts, both ways). The written round (youth-cup 2.2) is typed on the desk; the rooms play
the 1/16 in two runs on the same themes (2.4) and the rest; mid-round the hub's box is killed for good and the
standby takes over with one tap. Checked as the netns days are: every event of every station's log at the
(new) desk once and in order, every result on the desk the one recomputed from the station's own log.

The short day (in ./dev test, about two minutes): two rooms, the first 1/16 battles, the desk moved during them.
The whole day (``./dev bench rooms_wifi_day``, or ``SVOYAK_ROOMS_LONG=1``): six rooms (2.4), every stage to the
final, the desk moved during the 1/8."""

from __future__ import annotations

import os

import pytest

from tests.support import netns
from tests.support.wifi_netns_day import check_wifi_day, long_wifi_day, run_wifi_day

REASON = netns.can_run()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON)


def test_youth_cup_1_16_over_wifi_with_the_desk_moved_to_the_standby(tmp_path):
    """The short day: two rooms play the first 1/16 battles over Wi-Fi; the desk moves during them."""
    day = run_wifi_day(tmp_path, ["s1", "s2"], [{"preset": "youth-cup", "players": 48, "rounds": 1, "battles": 2}],
                       {"desk_to_standby": {"round": 0}})
    check_wifi_day(day)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SVOYAK_ROOMS_LONG"), reason="a whole day, many minutes: ./dev bench "
                    "rooms_wifi_day, or SVOYAK_ROOMS_LONG=1")
def test_a_whole_youth_cup_day_in_six_rooms_over_wifi(tmp_path):
    long_wifi_day(tmp_path)
