"""Two adversaries of a real box (web server and capture process over one data directory).

``scripted`` (bench/chaos.py): SIGKILLs of the server and the capture process at random moments during scripted
battles, with resend storms across the restarts; every acknowledged command checked in the store afterwards.

``stateful`` (bench/adversary.py): the hypothesis state machine of host taps on the real host page, presses,
audience connections, restarts, kills, package setups and undo, with the box's promises checked after every step,
for ``SVOYAK_BENCH_CHAOS_S`` seconds (default 1800: 30 minutes).

``SVOYAK_BENCH_CHAOS_MODE``: ``scripted``, ``stateful`` or ``both`` (the default).

The boxes live in folders of the temporary directory (``TMPDIR``). SIGTERM or SIGINT stops the bench cleanly: its
boxes' processes stopped, Chromium closed, the folders removed (bench/chaos.py :func:`stop_on_signals`); a
SIGKILL of the bench still takes its boxes' processes with it (their parent-death signal).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench import Report
from bench.chaos import Stopped, play, stop_on_signals

COMMANDS, KILLS, SEED = 400, 40, 20261201
STATEFUL_S = 1800.0


def run(report: Report) -> None:
    if report.short:  # a few commands and kills; one box of the stateful adversary, a few steps
        run_scripted(report, commands=10, kills=1)
        run_stateful(report, 1.0, steps=4)
        return
    mode = os.environ.get("SVOYAK_BENCH_CHAOS_MODE", "both")
    if mode not in ("scripted", "stateful", "both"):
        raise SystemExit(f"SVOYAK_BENCH_CHAOS_MODE is scripted, stateful or both, not {mode!r}")
    stop_on_signals()
    try:
        if mode in ("scripted", "both"):
            run_scripted(report)
        if mode in ("stateful", "both"):
            run_stateful(report, float(os.environ.get("SVOYAK_BENCH_CHAOS_S", STATEFUL_S)))
    except Stopped as stopped:
        print(f"  chaos: {stopped}; the boxes are stopped and their folders removed", flush=True)
        raise SystemExit(128 + stopped.signal_number) from None


def run_stateful(report: Report, seconds: float, steps: int = 40) -> None:
    from bench.adversary import run_for

    print(f"  the stateful adversary, for {seconds:.0f} s", flush=True)
    started = time.perf_counter()
    figures = run_for(seconds, steps_per_example=steps, log=lambda line: print(line, flush=True))
    report.figure("stateful: boxes (hypothesis examples)", figures.examples, "boxes")
    report.figure("stateful: steps checked (every promise after each)", figures.steps, "steps")
    report.figure("stateful: host taps on the page", figures.taps, "taps")
    report.figure("  of them refused in words on the page", figures.taps_refused, "taps")
    report.figure("stateful: commands through the host socket", figures.commands, "cmds")
    report.figure("  of them refused in words", figures.refused_commands, "cmds")
    report.figure("stateful: presses through the capture", figures.presses, "presses")
    report.figure("stateful: undos checked against the view before", figures.undos_checked, "undos")
    report.figure("stateful: «Снять вопрос» declined on its confirmation", figures.withdrawals_declined, "taps")
    report.figure("stateful: server restarts (SIGTERM)", figures.server_restarts, "restarts")
    report.figure("stateful: server kills (SIGKILL of its main process)", figures.server_kills, "kills")
    report.figure("stateful: capture restarts (SIGTERM)", figures.capture_restarts, "restarts")
    report.figure("stateful: capture kills (SIGKILL)", figures.capture_kills, "kills")
    report.figure("stateful: audience connections", figures.audience_connections, "conns")
    report.figure("stateful: audience payloads searched for secrets", figures.audience_payloads, "msgs")
    report.figure("stateful: package setups (.siq, db.chgk.info, CSV)", figures.package_setups, "setups")
    report.figure("stateful: replays compared with the host's view", figures.replays_checked, "replays")
    for invariant in ("tap", "restart", "secret", "undo", "replay", "harness"):
        report.figure(f"stateful: violations of {invariant!r}", figures.violations[invariant], "", target=0)
    for violation in figures.first_violations:
        print("    " + violation.replace("\n", "\n    ")[:2500])
    report.figure("stateful: wall time", time.perf_counter() - started, "s")


def run_scripted(report: Report, commands: int = COMMANDS, kills: int = KILLS) -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="svoyak-chaos-") as folder:
        figures = play(Path(folder), commands=commands, kills=kills, seed=SEED)
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
