"""Crash test: a process appending commands (two events each, like the host's "next") is SIGKILLed at 200+
random moments. After each kill the store opens, every acknowledged command is there exactly as written with
both its events, no half command appears, and the resend of the command in flight is stored once."""

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
from appliance.store import BATTLE, EventStore

ROOT = Path(__file__).resolve().parents[3]
KILLS = 220  # at least; and at least 200 of them while appending

# A clean single-threaded "zygote" process imports the store once, then forks one writer per round (a fork
# costs a millisecond where a fresh interpreter costs a tenth of a second). The writer acknowledges an event
# (writes its seq to a pipe) only after append() returned, i.e. after COMMIT; the zygote relays to the test.
ZYGOTE = r"""
import os, sys
from appliance.rules.battle import ButtonPressed
from appliance.store import BATTLE, DuplicateCommandError, EventStore
path = sys.argv[1]
for command in sys.stdin:
    start = int(command.split()[1])  # the first command the test has no acknowledgement of: resent
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            store = EventStore(path)
            os.write(write_end, b"ready\n")
            number = start
            while True:
                events = [ButtonPressed(at_ns=number * 1000 + half, player=number % 4, source="button")
                          for half in (1, 2)]
                try:
                    store.append(BATTLE, "crash", events, command_id=f"c{number}", result={"n": number})
                except DuplicateCommandError:
                    pass  # stored before the kill, never acknowledged: the resend applies nothing
                os.write(write_end, f"{number}\n".encode())
                number += 1
        finally:
            os._exit(3)
    os.close(write_end)
    print(f"pid {pid}", flush=True)
    reader = os.fdopen(read_end, "rb")
    first = reader.readline()
    if first == b"ready\n":
        print("ready", flush=True)
    rest = reader.read()  # until the writer dies
    reader.close()
    os.waitpid(pid, 0)
    acked = [int(line) for line in rest.split(b"\n")[:-1] if line.isdigit()]  # whole lines only
    print(f"acked {acked[-1] if acked else 0} {len(acked)}", flush=True)
"""


def expected_row(seq: int) -> tuple[str, str]:
    """The body and command id event ``seq`` must have: command ``n`` holds events ``2n - 1`` and ``2n``."""
    number, half = (seq + 1) // 2, 2 - seq % 2
    body = json.dumps(event_to_dict(ButtonPressed(at_ns=number * 1000 + half, player=number % 4)),
                      ensure_ascii=False, separators=(",", ":"))
    return body, f"c{number}"


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_acknowledged_event_and_leaves_no_partial_one(tmp_path):
    path = tmp_path / "events.sqlite"
    rng = random.Random(20261130)
    acknowledged = 0
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    zygote = subprocess.Popen([sys.executable, "-c", ZYGOTE, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=environment, cwd=ROOT, text=True, bufsize=1)
    rounds_with_appends = 0
    try:
        kill = 0
        while kill < KILLS or rounds_with_appends < 200:
            kill += 1
            assert kill < 2 * KILLS, "the writers hardly ever got to append"
            zygote.stdin.write(f"go {acknowledged + 1}\n")
            zygote.stdin.flush()
            pid = int(zygote.stdout.readline().split()[1])
            # a random moment: sometimes while the writer opens the store, mostly while it appends
            if rng.random() < 0.15:
                time.sleep(rng.uniform(0, 0.005))
                os.kill(pid, signal.SIGKILL)
                line = zygote.stdout.readline()
                if line == "ready\n":
                    line = zygote.stdout.readline()
            else:
                assert zygote.stdout.readline() == "ready\n"
                time.sleep(rng.uniform(0, 0.03))
                os.kill(pid, signal.SIGKILL)
                line = zygote.stdout.readline()
            _, last, count = line.split()
            if int(count):
                rounds_with_appends += 1
                acknowledged = max(acknowledged, int(last))

            with EventStore(path) as store:  # opens after every kill
                rows = store.read(BATTLE, "crash")
                stored = len(rows) // 2
                assert len(rows) % 2 == 0, f"kill {kill}: half a command stored"
                assert stored >= acknowledged, f"kill {kill}: acknowledged command {acknowledged} lost"
                assert stored <= acknowledged + 1, f"kill {kill}: more stored than was ever sent"
                for number in range(1, stored + 1):
                    command = store.command(BATTLE, f"c{number}")
                    assert (command.first_seq, command.last_seq, command.result) == (2 * number - 1, 2 * number,
                                                                                     {"n": number})
            seqs = [row.seq for row in rows]
            assert seqs == list(range(1, len(seqs) + 1)), f"kill {kill}: a gap in the log"
            with sqlite3.connect(path) as raw:
                assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
                bodies = raw.execute("SELECT seq, body, command_id FROM stream_events ORDER BY seq").fetchall()
            for seq, body, command_id in bodies:  # nothing partial, nothing twice: every row exactly as written
                assert (body, command_id) == expected_row(seq)
    finally:
        zygote.stdin.close()
        zygote.wait(timeout=30)
        zygote.stdout.close()
    assert rounds_with_appends >= 200  # 200+ kills landed while events were being appended
