"""What the audiences' records (appliance/service/audience.py) cost on the press path, and what they save.

A whole battle from a SIGame package is played in a session (memory store, no web): every update it makes is
projected to the board's record, as ``web.sync.Hub.broadcast`` does once per update for every board. Figures:
the projection's time per update (a press's update, every update) against the version-1 deny-list filter it
replaced (a dict comprehension over the update's changes), the snapshot's projection, and the bytes of the
setup's update the boards got then and get now. Target: a press's board payload made in 50 µs at p99 (the
press-to-board target is 5 ms median, 20 ms p99: bench_web).
"""

from __future__ import annotations

import itertools
import json
import tempfile
import time
from pathlib import Path

from bench import median, percentile

OLD_HOST_ONLY = frozenset({"allowed", "appeals", "questions", "seat_codes", "battles", "undo", "reading"})
ROUNDS = 50  # each update projected this many times: its median is the figure


def _battle():
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.battles import Battles
    from appliance.service.packages import QuestionPackages
    from appliance.service.session import Session
    from appliance.store import EventStore
    from tests.support.packages import sport_siq

    folder = tempfile.mkdtemp()
    battles = Battles(EventStore(":memory:"), new_id=(f"b{n}" for n in itertools.count(1)).__next__)
    packages = QuestionPackages.in_folder(Path(folder) / "packages", battles)
    package_id = packages.add("кубок.siq", sport_siq(6))["id"]
    clock = [10**12]
    session = Session(battles, BattleAdapter(packages=packages), clock=lambda: clock[0],
                      simulator=True).start(timer_thread=False)
    updates: list[dict] = []
    session.subscribe(updates.append)
    ids = itertools.count()

    def command(name, **args):
        clock[0] += 10**8
        session.command(name, args or None, f"c{next(ids)}")

    command("setup", profile="eurocup", players=["Аня", "Борис", "Вера"], themes=[{"name": ""}] * 4,
            package={"id": package_id})
    number = 0
    while not session.state.is_over and number < 60:
        command("next")
        question = session.state.current_question
        if question is None:
            continue
        command("reading_done")
        eligible = [p["index"] for p in session.snapshot()["view"]["players"] if p["eligible"]]
        for player in eligible[:2]:
            clock[0] += 10**7
            session.on_capture_event({"event": "press", "seq": next(ids), "player": player + 1, "t_ns": clock[0],
                                      "status": "won"})
        command("point")
        command("right")
        command("announce")
        number += 1
    snapshot = session.snapshot()
    session.close()
    return updates, snapshot


def _timed(function, argument, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter_ns()
        function(argument)
        times.append(time.perf_counter_ns() - started)
    return median(times) / 1000


def run(report) -> None:
    from appliance.service.audience import BOARD

    updates, snapshot = _battle()
    rounds = 2 if report.short else ROUNDS

    def old(update):
        return {**update, "changes": {k: v for k, v in update["changes"].items() if k not in OLD_HOST_ONLY}}

    presses = [u for u in updates if (u["event"] or {}).get("type") == "ButtonPressed"]
    new_press = [_timed(BOARD.update, u, rounds) for u in presses]
    old_press = [_timed(old, u, rounds) for u in presses]
    new_all = [_timed(BOARD.update, u, rounds) for u in updates]
    old_all = [_timed(old, u, rounds) for u in updates]
    report.figure(f"board payload of a press's update, p50 ({len(presses)} presses)", median(new_press), "µs")
    report.figure("board payload of a press's update, p99", percentile(new_press, 0.99), "µs", target=50)
    report.ratio("  against the version-1 deny-list filter (p50)", median(new_press), median(old_press))
    report.figure(f"board payload of any update, p50 ({len(updates)} updates)", median(new_all), "µs")
    report.figure("board payload of any update, p99", percentile(new_all, 0.99), "µs")
    report.ratio("  against the version-1 deny-list filter (p50)", median(new_all), median(old_all))
    report.figure("board snapshot (connect, resync)", _timed(BOARD.snapshot, snapshot, rounds), "µs")
    setup = updates[0]
    size = lambda payload: len(json.dumps(payload, ensure_ascii=False).encode())  # noqa: E731
    report.figure("the setup's update to a board, version 1 (texts and answers)", size(old(setup)), "bytes")
    report.figure("the setup's update to a board, now", size(BOARD.update(setup)), "bytes")
    report.figure("a press's update to a board, now", median([size(BOARD.update(u)) for u in presses]), "bytes")
