"""Crash test: a process appending events is SIGKILLed at 200+ random moments. After each kill the store
opens, every acknowledged event is there exactly as written, and no partial event appears."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from appliance.rules.battle import ButtonPressed, event_to_dict
from appliance.store import EventStore

ROOT = Path(__file__).resolve().parents[3]
KILLS = 210

# The writer acknowledges an event (prints its seq) only after append() returned, i.e. after COMMIT.
WRITER = r"""
import os, sys
from appliance.rules.battle import ButtonPressed
from appliance.store import EventStore
store = EventStore(sys.argv[1])
seq = store.count("crash")
os.write(1, b"ready\n")
while True:
    seq = store.append("crash", ButtonPressed(at_ns=seq * 1000 + 7, player=seq % 4, source="button"),
                       command_id=f"c{seq}")
    os.write(1, f"{seq}\n".encode())
"""


def expected_body(seq: int) -> str:
    index = seq - 1
    return json.dumps(event_to_dict(ButtonPressed(at_ns=index * 1000 + 7, player=index % 4)), ensure_ascii=False,
                      separators=(",", ":"))


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_acknowledged_event_and_leaves_no_partial_one(tmp_path):
    path = tmp_path / "events.sqlite"
    rng = random.Random(20261130)
    acknowledged = 0
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    for kill in range(KILLS):
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env=environment, cwd=ROOT)
        # a random moment: sometimes while it starts and opens the store, mostly while it appends
        if rng.random() < 0.15:
            time.sleep(rng.uniform(0, 0.08))
        else:
            assert child.stdout.readline() == b"ready\n"
            time.sleep(rng.uniform(0, 0.03))
        child.send_signal(signal.SIGKILL)
        output = child.stdout.read().decode()
        child.wait()
        child.stdout.close()
        acked = [int(line) for line in output.split("\n")[:-1] if line.isdigit()]  # whole lines only
        if acked:
            acknowledged = max(acknowledged, acked[-1])

        with EventStore(path) as store:  # opens after every kill
            rows = store.read("crash")
        seqs = [row.seq for row in rows]
        assert seqs == list(range(1, len(seqs) + 1)), f"kill {kill}: a gap in the log"
        assert len(seqs) >= acknowledged, f"kill {kill}: acknowledged event {acknowledged} lost"
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            bodies = raw.execute("SELECT seq, body, command_id FROM events ORDER BY seq").fetchall()
        for seq, body, command_id in bodies:  # nothing partial: every row is exactly what was written
            assert body == expected_body(seq) and command_id == f"c{seq - 1}"
    assert acknowledged > KILLS  # the writers really were appending when killed
