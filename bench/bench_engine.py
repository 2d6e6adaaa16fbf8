"""Battle engine and event log figures: events applied per second, replay of a 10,000-event log, and the
latency of one durable append (WAL, synchronous=FULL) on this machine's disk."""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path

from bench import Report, median, percentile


def battle_events(themes: int, presses_per_question: int = 6):
    """A realistic eurocup final: presses (some during answers, some late), wrong and right answers."""
    from appliance.rules.battle import (AnswererPointed, AnswerJudged, BattleSetUp, ButtonPressed, PressWindowExpired,
                                        PriceAnnounced, ReadingFinished, ReadingStarted, ThemeStarted, apply)
    from appliance.service.presets import load_profile

    import dataclasses

    # a long log (200 themes) is beyond any regulation: the bench raises the profile's bound ([themes] max)
    profile = dataclasses.replace(load_profile("eurocup-final"), themes_max=max(themes, 60))
    state = apply(None, BattleSetUp(at_ns=0, profile=profile, players=("A", "B", "C"), themes=themes))
    events = [state.setup]
    now = 1_000_000

    def add(event):
        nonlocal state
        state = apply(state, event)
        events.append(event)

    for theme in range(themes):
        add(ThemeStarted(at_ns=now))
        for number in range(5):
            now += 1_000_000
            add(PriceAnnounced(at_ns=now, value_points=state.expected_value()))
            add(ReadingStarted(at_ns=now + 1))
            add(ReadingFinished(at_ns=now + 2))
            now += 3
            first = (theme + number) % 3
            add(ButtonPressed(at_ns=now, player=first))
            for extra in range(presses_per_question - 2):
                add(ButtonPressed(at_ns=now + 50_000 + extra, player=(first + 1 + extra) % 3))
            add(AnswererPointed(at_ns=now + 100_000, player=first))
            add(AnswerJudged(at_ns=now + 200_000, correct=number % 2 == 0))
            if state.current_question is not None:
                add(ButtonPressed(at_ns=now + 300_000, player=(first + 1) % 3))
                if state.answerer is not None:
                    add(AnswererPointed(at_ns=now + 400_000, player=state.answerer))
                    add(AnswerJudged(at_ns=now + 500_000, correct=False))
                if state.current_question is not None and state.answerer is None:
                    add(PressWindowExpired(at_ns=state.press_window_over_ns))
            now = state.last_at_ns + 1
    return events, state


def run(report: Report) -> None:
    from appliance.rules.battle import apply, replay
    from appliance.store import BATTLE, EventStore, dump_log
    from appliance.store.jsonl import iter_log

    seconds, long_count, appends = (0.1, 500, 20) if report.short else (2.0, 10_000, 600)
    events, final = battle_events(themes=12)
    # events applied per second: the whole final battle, applied again and again. Measured in CPU time of this
    # process (time.process_time) as well as wall time: on a shared machine the wall figure measures the
    # scheduler's share as much as the engine.
    rounds, applied = 0, 0
    wall_started, cpu_started = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall_started < seconds:
        state = None
        for event in events:
            state = apply(state, event)
        rounds += 1
        applied += len(events)
    wall, cpu = time.perf_counter() - wall_started, time.process_time() - cpu_started
    assert state == final
    report.figure("events applied per CPU second (eurocup final, 12 themes)", applied / cpu, "ev/s",
                  target=50_000, better="higher")
    report.figure("events applied per wall second (same run)", applied / wall, "ev/s")

    # replay of a 10,000-event log from its JSON Lines text: a long battle (presses, rulings, expiries)
    long_events, _ = battle_events(themes=200)
    long_events = long_events[:long_count]
    assert len(long_events) == long_count
    text = dump_log("bench", long_events)
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        rows = iter_log(io.StringIO(text))
        next(rows)
        state = replay(event for _, event in rows)
        samples.append(time.perf_counter() - started)
    assert state.seq == len(long_events)
    report.figure(f"replay of a {long_count:,}-event JSONL log (parse + apply), median", median(samples) * 1000, "ms",
                  target=1000)
    started = time.perf_counter()
    replay(long_events)
    report.figure(f"replay of {long_count:,} events (apply only)", (time.perf_counter() - started) * 1000, "ms")

    # one durable append (WAL, synchronous=FULL): median and p99
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as folder:
        with EventStore(Path(folder) / "events.sqlite") as store:
            latencies = []
            for index, event in enumerate(events[:appends]):
                started = time.perf_counter()
                store.append(BATTLE, "bench", [event], command_id=f"c{index}")
                latencies.append(time.perf_counter() - started)
    report.figure("durable append, median", median(latencies) * 1000, "ms", target=10)
    report.figure("durable append, p99", percentile(latencies, 0.99) * 1000, "ms", target=50)
