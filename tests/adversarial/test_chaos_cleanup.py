"""``./dev bench chaos`` stopped from outside leaves nothing behind (issue 19): a SIGTERM or a SIGINT stops its boxes
(``svoyak serve`` with its gunicorn worker, ``svoyak capture``), closes Chromium and removes its folders; a SIGKILL,
which no handler sees, still takes the boxes' processes with it (their parent-death signal, bench/chaos.py).

Each test runs the real bench as a process with a temporary directory of its own (``TMPDIR``) and finds every
process it started by that directory in their environment: the bench itself, its boxes, Playwright's driver and
Chromium all inherit it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.adversary import CHROMIUM
from tests.support.boxes import wait_for

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GONE_S = 15.0


def processes_with(mark: bytes) -> dict[int, str]:
    """Live processes (not zombies) with ``mark`` (``NAME=value``) in their environment: pid -> command line."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and mark in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                found[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
        except (OSError, IndexError):
            continue
    return found



@pytest.fixture
def bench(tmp_path):
    """Start ``python -m bench chaos`` in ``mode``; yields (process, its TMPDIR, its output file). Whatever it
    leaves is SIGKILLed at teardown (after the test has looked)."""
    # short: Chromium's singleton socket and the box's capture socket live in it (a Unix socket's path is
    # at most 107 bytes)
    temporary = Path(tempfile.mkdtemp(prefix="svoyak-cleanup-"))
    mark = f"TMPDIR={temporary}".encode()
    started: list[subprocess.Popen] = []

    def start(mode: str, seconds: float = 600):
        output = tmp_path / "bench.out"
        env = {**os.environ, "TMPDIR": str(temporary), "PYTHONPATH": str(ROOT), "SVOYAK_BENCH_CHAOS_MODE": mode,
               "SVOYAK_BENCH_CHAOS_S": str(seconds), "PYTHONUNBUFFERED": "1"}
        with open(output, "wb") as sink:
            process = subprocess.Popen([sys.executable, "-m", "bench", "chaos"], cwd=ROOT, env=env, stdout=sink,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        started.append(process)
        return process, temporary, output, mark

    yield start
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    for pid in processes_with(mark):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(temporary, ignore_errors=True)


def box_running(mark: bytes):
    """The box's serve with its gunicorn worker and its capture run: every process of the bench, else None."""
    found = processes_with(mark)
    serving = [pid for pid, command in found.items() if "svoyak.cli serve" in command]
    capturing = [pid for pid, command in found.items() if "svoyak.cli capture" in command]
    return found if len(serving) >= 2 and capturing else None


def stop_and_check(process, temporary: Path, output: Path, mark: bytes, signal_number: int, folder_prefix: str):
    process.send_signal(signal_number)
    code = process.wait(timeout=90)
    said = output.read_text(errors="replace")
    assert code == 128 + signal_number, (code, said[-2000:])
    assert f"stopped by {signal.Signals(signal_number).name}" in said, said[-2000:]
    wait_for(lambda: not processes_with(mark), GONE_S, f"end of every process of the bench: {processes_with(mark)}")
    assert not list(temporary.glob(folder_prefix + "*")), list(temporary.iterdir())
    assert "Traceback" not in said, said[-3000:]


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_scripted_chaos_and_its_box(bench, signal_number):
    process, temporary, output, mark = bench(mode="scripted")
    wait_for(lambda: box_running(mark), 90, "box of the bench")
    time.sleep(2)  # commands under way
    assert process.poll() is None, output.read_text()
    stop_and_check(process, temporary, output, mark, signal_number, "svoyak-chaos-")


def test_a_sigkill_of_the_bench_takes_its_box_with_it(bench):
    process, _temporary, output, mark = bench(mode="scripted")
    wait_for(lambda: box_running(mark), 90, "box of the bench")
    time.sleep(1)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    wait_for(lambda: not processes_with(mark), GONE_S, f"end of the box's processes: {processes_with(mark)}")


@pytest.mark.browser
def test_a_sigterm_stops_the_stateful_chaos_its_boxes_and_chromium(bench):
    pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (./dev test installs it)")
    process, temporary, output, mark = bench(mode="stateful")
    wait_for(lambda: box_running(mark) or process.poll() is not None, 120, "box of the bench")
    assert process.poll() is None, output.read_text()
    wait_for(lambda: any("chrom" in command for command in processes_with(mark).values()), 60, "Chromium")
    time.sleep(3)  # the host page taps
    assert process.poll() is None, output.read_text()
    stop_and_check(process, temporary, output, mark, signal.SIGTERM, "svoyak-adversary-")
