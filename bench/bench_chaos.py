"""SIGKILLs of the server and the capture process at random moments during scripted battles, with resend
storms across the restarts (bench/chaos.py); every acknowledged command checked in the store afterwards."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench import Report
from bench.chaos import play

COMMANDS, KILLS, SEED = 400, 40, 20261201


def run(report: Report) -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as folder:
        figures = play(Path(folder), commands=COMMANDS, kills=KILLS, seed=SEED)
    report.figure("kills (server, capture or both)", figures.server_kills + figures.capture_kills, "kills")
    report.figure("  of them the web server", figures.server_kills, "kills")
    report.figure("  of them the capture process", figures.capture_kills, "kills")
    report.figure("host commands acknowledged", figures.commands_acknowledged, "cmds")
    report.figure("commands in flight at a kill (resent after the restart)", figures.commands_in_flight_at_a_kill,
                  "cmds")
    report.figure("  of them stored before the kill (the resend answered duplicate)",
                  figures.in_flight_already_stored, "cmds")
    report.figure("resends (storms and in-flight)", figures.resends, "msgs")
    report.figure("resends answered duplicate with the first result", figures.duplicates_answered, "msgs")
    report.figure("battles played", figures.battles, "battles")
    report.figure("presses through the capture", figures.presses, "presses")
    report.figure("acknowledged commands lost", figures.lost, "cmds", target=0)
    report.figure("commands applied twice", figures.doubled, "cmds", target=0)
    report.figure("commands stored with other events than asked", figures.wrong_events, "cmds", target=0)
    report.figure("resends answered wrongly", figures.wrong_resend_answers, "msgs", target=0)
    report.figure("other problems", len(figures.problems), "", target=0)
    for problem in figures.problems[:10]:
        print(f"    {problem}")
    report.figure("wall time", time.perf_counter() - started, "s")
