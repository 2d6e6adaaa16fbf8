"""The hall's audience beside the game, on a real box (``svoyak run --simulator``: gunicorn gthread with 100
threads, the capture on mock pins, the spectators' nats-server): the helpers of ``bench/bench_spectators.py`` and
of its tiny form in ``tests/web/test_bench_spectators.py``.

A :class:`Box` runs the box in a process group of its own (optionally inside a cgroup v1 memory limit, a Pi 3's
1 GB). Where it runs: the game (svoyak run, gunicorn, the capture, the kiosk) and the bench's host and first
board clients on :data:`BOX_CPUS` (the first core); the spectators' nats-server on a core of its own,
:data:`SPECTATORS_CPUS` (setting ``spectators_cpus``, as a Pi 3 gives it cores 2 and 3), with the crowd
(SCHED_IDLE) and the probes on :data:`CLIENT_CPUS`: the client simulator cannot eat the CPU of the game it
measures (the machine's other users can: :func:`load` is printed beside every figure). :func:`play` drives the
host (Socket.IO ``/host`` with the PIN) and presses (``/sim``, the mock pins' path) and times, with a python
Socket.IO ``/board`` client as the first board: command -> ack, and press sent -> that board's update with the
press. :class:`Crowd` starts light spectators (``tests/crowd.py``) in a few processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import socketio

ROOT = Path(__file__).resolve().parents[1]
SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"],
         "themes": [{"name": "Реки"}, {"name": "Кино"}, {"name": "Химия"}, {"name": "Спорт"}]}
PER_PROCESS = 250          # spectators per crowd process (one asyncio loop each)
CGROUP_V1 = Path("/sys/fs/cgroup/memory")
CPUS = sorted(os.sched_getaffinity(0))
PINNED = len(CPUS) > 1 and os.environ.get("SVOYAK_BENCH_PIN", "1") != "0"
BOX_CPUS = {CPUS[0]} if PINNED else set(CPUS)        # the box: svoyak run, gunicorn, capture, nats-server, kiosk
CLIENT_CPUS = set(CPUS[1:]) if PINNED else set(CPUS)  # the crowd (SCHED_IDLE) and the probes
# The host's client and the first board (the HDMI kiosk's stand-in) beside the game: they are the game's, and on the
# fan-out's core its bursts would be timed as the game's latency.
MEASURE_CPUS = BOX_CPUS
# The fan-out's own core (setting spectators_cpus, as a Pi 3 gives it cores 2 and 3): the clients' core, where it
# outranks the crowd (SCHED_IDLE); SVOYAK_BENCH_FANOUT=box keeps it on the game's core instead.
FANOUT_APART = PINNED and os.environ.get("SVOYAK_BENCH_FANOUT", "apart") != "box"
SPECTATORS_CPUS = ",".join(map(str, sorted(CLIENT_CPUS if FANOUT_APART else BOX_CPUS)))
# On a core of its own the fan-out's nice (spectators_nice, 10) guards nothing of the game's, and on this shared
# machine it would hand that core to the other users' processes: 0 there (SVOYAK_BENCH_FANOUT_NICE to choose).
FANOUT_NICE = os.environ.get("SVOYAK_BENCH_FANOUT_NICE", "0" if FANOUT_APART else "10")


def load() -> str:
    """The machine's load average (1, 5, 15 minutes), as printed beside each figure."""
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def placement() -> str:
    if not PINNED:
        return f"not pinned: box and clients share cores {sorted(BOX_CPUS)}"
    return (f"the game (svoyak run, gunicorn, capture, kiosk) pinned to core {sorted(BOX_CPUS)}, the spectators' "
            f"nats-server to {SPECTATORS_CPUS} (spectators_cpus) at nice +{FANOUT_NICE} (spectators_nice), clients to {sorted(CLIENT_CPUS)} (the crowd "
            f"SCHED_IDLE: it runs only when nothing else would; the probes at the bench's own nice {os.nice(0)}), the "
            f"host's and first board's clients with the game on {sorted(MEASURE_CPUS)}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Box:
    """``svoyak run --simulator`` over a fresh data dir; ``memory_limit_mb``: inside a cgroup v1 memory limit
    (with a headless Chromium kiosk on ``/board`` beside it, as on the box)."""

    def __init__(self, cap: int = 40, memory_limit_mb: int = 0, spectators: bool = True) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="svoyak-audience-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.cgroup: Path | None = None
        self.kiosk: subprocess.Popen | None = None
        self.crowds: list[subprocess.Popen] = []  # killed with the box, whatever went wrong
        self.crowd_runs = 0
        env = {**os.environ, "SVOYAK_DATA_DIR": str(self.folder), "SVOYAK_CONFIG": str(self.folder / "none.toml"),
               "SVOYAK_SPECTATORS_WS_PORT": "0", "SVOYAK_SPECTATORS_CLIENT_PORT": "0",
               "SVOYAK_SPECTATORS_SOCKET_CAP": str(cap), "SVOYAK_SPECTATORS": "1" if spectators else "0",
               "SVOYAK_SPECTATORS_CPUS": SPECTATORS_CPUS, "SVOYAK_SPECTATORS_NICE": FANOUT_NICE}
        (self.folder / "none.toml").write_text("")
        self.log = open(self.folder / "run.log", "w")
        if memory_limit_mb:
            self.cgroup = CGROUP_V1 / f"svoyak-bench-{os.getpid()}"
            self.cgroup.mkdir(exist_ok=True)
            (self.cgroup / "memory.limit_in_bytes").write_text(str(memory_limit_mb * 1024 * 1024))
        procs = self.cgroup / "cgroup.procs" if self.cgroup is not None else None

        def preexec() -> None:  # the child joins the cgroup and takes the box's core before exec
            if procs is not None:
                procs.write_text(str(os.getpid()))
            os.sched_setaffinity(0, BOX_CPUS)
        self.process = subprocess.Popen([sys.executable, "-m", "appliance.cli", "run", "--simulator", "--port",
                                         str(self.port)], env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True, cwd=ROOT, preexec_fn=preexec)
        self._wait(self.url + "/board")
        self.identity = json.loads((self.folder / "identity.json").read_text())
        self.ws_url = self._ws_url() if spectators else ""
        if self.cgroup is not None and Path("/usr/bin/chromium").exists():
            self.kiosk = subprocess.Popen(
                ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", f"--user-data-dir={self.folder / 'kiosk'}",
                 "--remote-debugging-port=0", self.url + "/board"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=preexec)
            time.sleep(3)

    def _wait(self, url: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"svoyak run exited; see {self.folder}/run.log")
            try:
                with urllib.request.urlopen(url, timeout=2):
                    return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(url)

    def _ws_url(self) -> str:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for path in (self.folder / "spectators").glob("*.ports"):
                found = json.loads(path.read_text() or "{}")
                if found.get("websocket"):
                    return found["websocket"][0].replace("0.0.0.0", "127.0.0.1")
            time.sleep(0.1)
        raise TimeoutError("the spectators' nats-server did not start")

    @property
    def update_subject(self) -> str:
        from appliance.service.spectators import conf

        return conf.subject(self.identity["box_name"], conf.UPDATE)

    def rss_kb(self) -> dict:
        """Resident memory of the box's processes by name (the process group: run/gunicorn, capture, nats)."""
        found: dict[str, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getpgid(int(entry.name)) != self.process.pid:
                    continue
                status = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines()
                              if ":" in line)
            except (OSError, ValueError):
                continue
            name = status["Name"].strip()
            found[name] = found.get(name, 0) + int(status.get("VmRSS", "0 kB").split()[0])
        return found

    def cpu_s(self) -> dict:
        """CPU seconds (user + system) so far of the box's processes by name, and under ``<name> waiting`` the
        seconds they were runnable but waited for a CPU (``/proc/<pid>/task/<tid>/schedstat``)."""
        ticks = os.sysconf("SC_CLK_TCK")
        found: dict[str, float] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getpgid(int(entry.name)) != self.process.pid:
                    continue
                stat = (entry / "stat").read_text()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2:].split()
                for task in (entry / "task").iterdir():  # every thread: the worker's are not its main's
                    tstat = (task / "stat").read_text()
                    tfields = tstat[tstat.rindex(")") + 2:].split()
                    found[name] = found.get(name, 0.0) + (int(tfields[11]) + int(tfields[12])) / ticks
                    # schedstat: ns on a CPU, ns runnable but waiting for one (what the machine's load costs it)
                    waited = int((task / "schedstat").read_text().split()[1]) / 1e9
                    found[name + " waiting"] = found.get(name + " waiting", 0.0) + waited
                del fields
            except (OSError, ValueError):
                continue
        return found

    def cgroup_peak_mb(self) -> float | None:
        if self.cgroup is None:
            return None
        return int((self.cgroup / "memory.max_usage_in_bytes").read_text()) / 1024 / 1024

    def cgroup_failcnt(self) -> int | None:
        return None if self.cgroup is None else int((self.cgroup / "memory.failcnt").read_text())

    def close(self) -> None:
        for process in self.crowds:
            if process.poll() is None:
                process.kill()
                process.wait()
        for process in (self.kiosk, self.process):
            if process is None or process.poll() is not None:
                continue
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.log.close()
        if self.cgroup is not None:
            for _ in range(50):
                try:
                    self.cgroup.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
        shutil.rmtree(self.folder, ignore_errors=True)  # the data dir, the crowd's files, the kiosk's profile


class Crowd:
    """``count`` spectators of ``kind`` (nats, socketio, poll) in processes of :data:`PER_PROCESS` on
    :data:`CLIENT_CPUS` under SCHED_IDLE (they stand for phones, which do not share the box's CPU), then ``probes`` more
    in a process of their own at the bench's own priority, connected last. A nats spectator's arrival is the
    kernel's receive time of the bytes (tests/crowd.py), so it is the box's, however late its process reads."""

    def __init__(self, box: Box, kind: str, count: int, seconds: float = 600, probes: int = 0) -> None:
        self.outs: list[Path] = []
        self.processes: list[subprocess.Popen] = []
        self.probe_out: Path | None = None
        url = box.ws_url if kind == "nats" else box.url
        box.crowd_runs += 1
        run = box.crowd_runs  # each crowd its own files: a file of an earlier crowd (.ready, .stop) is never read
        left, number = count, 0
        while left > 0:
            size = min(PER_PROCESS, left)
            self._start(box, kind, url, size, seconds, box.folder / f"crowd{run}-{kind}-{number}.json", nice=True)
            left -= size
            number += 1
        self._wait()
        if probes:
            self.probe_out = box.folder / f"crowd{run}-{kind}-probes.json"
            self._start(box, kind, url, probes, seconds, self.probe_out, nice=False)
            self._wait()
        self.ready = [json.loads(Path(str(out) + ".ready").read_text()) for out in self.outs]

    def _start(self, box, kind, url, size, seconds, out, nice: bool) -> None:
        self.outs.append(out)
        command = [sys.executable, "-m", "tests.crowd", kind, url, box.update_subject, str(size), str(seconds),
                   str(out)]
        self.processes.append(subprocess.Popen((["chrt", "--idle", "0"] if nice else []) + command, cwd=ROOT,
                                               preexec_fn=lambda: os.sched_setaffinity(0, CLIENT_CPUS)))
        box.crowds.append(self.processes[-1])

    def _wait(self) -> None:
        deadline = time.monotonic() + 120
        for out in self.outs:
            ready = Path(str(out) + ".ready")
            while not ready.exists():
                if time.monotonic() > deadline:
                    raise TimeoutError("the crowd did not connect")
                time.sleep(0.1)

    @property
    def connected(self) -> int:
        return sum(item["connected"] for item in self.ready)

    @property
    def refused(self) -> int:
        return sum(item["refused"] for item in self.ready)

    def stop(self) -> dict:
        """Stop and merge: ``{connected, refused, failed, arrivals: {seq: [ns...]}, reads: {seq: [ns...]},
        sent_ns: {seq: ns}}`` (arrivals: the kernel's; reads: when the process read them), the probes' own
        arrivals under ``probes``."""
        time.sleep(1.0)  # the last update reaches the last spectator
        for out in self.outs:
            Path(str(out) + ".stop").write_text("")
        merged = {"connected": 0, "refused": 0, "failed": 0, "arrivals": {}, "reads": {}, "sent_ns": {}, "errors": [],
                  "probes": {}}
        for process, out in zip(self.processes, self.outs):
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            part = json.loads(out.read_text())
            for key in ("connected", "refused", "failed"):
                merged[key] += part[key]
            for seq, times in part.get("reads", {}).items():
                merged["reads"].setdefault(int(seq), []).extend(times)
            for seq, times in part["arrivals"].items():
                merged["arrivals"].setdefault(int(seq), []).extend(times)
                if out == self.probe_out:
                    merged["probes"].setdefault(int(seq), []).extend(times)
            merged["sent_ns"].update({int(seq): at for seq, at in part["sent_ns"].items()})
            merged["errors"].extend(part["errors"])
        return merged


def one_way_ms(arrivals: dict, sent_ns: dict, seqs: set[int]) -> list[float]:
    """Every delivery of ``seqs`` in ``arrivals``: its arrival minus the update's ``server_now_ns``, ms."""
    return [(at - sent_ns[seq]) / 1e6 for seq in seqs if seq in sent_ns for at in arrivals.get(seq, ())]


def last_spectator_ms(merged: dict, seqs: set[int], key: str = "arrivals") -> list[float]:
    """Per update (of ``seqs``): the last spectator's arrival (``key`` reads: its process's read) minus the
    update's ``server_now_ns``, ms."""
    samples = []
    for seq in seqs:
        times, sent = merged[key].get(seq), merged["sent_ns"].get(seq)
        if times and sent:
            samples.append((max(times) - sent) / 1e6)
    return samples


@contextlib.contextmanager
def clients(box: Box):
    """The host (``/host`` and ``/sim``) and the first board (``/board``, no spectator's mark)."""
    host = socketio.Client(reconnection=False)
    views: dict = {}
    changed = threading.Condition()

    def snapshot(data):
        with changed:
            views["view"], views["seq"] = data["view"], data["seq"]
            changed.notify_all()

    def update(data):
        with changed:
            if views.get("seq") is not None and data["seq"] == views["seq"] + 1:
                views["view"].update(data["changes"])
                for key in data["removed"]:
                    views["view"].pop(key, None)
                views["seq"] = data["seq"]
            changed.notify_all()

    host.on("snapshot", snapshot, namespace="/host")
    host.on("update", update, namespace="/host")
    host.connect(box.url, namespaces=["/host", "/sim"], auth={"pin": box.identity["host_pin"]},
                 transports=["websocket"], wait_timeout=10)
    board = socketio.Client(reconnection=False)
    presses: list = []
    board_seen = threading.Condition()

    def board_update(data):
        with board_seen:
            presses.append((time.monotonic_ns(), data["seq"], "presses" in data["changes"]))
            board_seen.notify_all()

    board.on("update", board_update, namespace="/board")
    board.connect(box.url, namespaces=["/board"], transports=["websocket"], wait_timeout=10)
    with changed:
        changed.wait_for(lambda: "view" in views, timeout=10)
    try:
        yield {"host": host, "views": views, "changed": changed, "board": board, "presses": presses,
               "board_seen": board_seen}
    finally:
        host.disconnect()
        board.disconnect()


def play(box: Box, presses: int) -> dict:
    """Play questions until ``presses`` presses were timed: ``{ack_ms: [...], press_ms: [...], seqs: set}``."""
    acks, press_ms, seqs = [], [], set()
    numbers = iter(range(1, 10**9))
    with clients(box) as c:
        host, views, changed = c["host"], c["views"], c["changed"]

        def command(name, args=None):
            started = time.perf_counter()
            ack = host.call("command", {"id": f"b{next(numbers)}", "name": name, "args": args or {}},
                            namespace="/host", timeout=15)
            acks.append((time.perf_counter() - started) * 1000)
            if ack.get("seq"):
                seqs.add(ack["seq"])
            with changed:  # the host's own view caught up before the next choice
                changed.wait_for(lambda: views.get("seq", 0) >= ack.get("seq", 0), timeout=5)
            return ack

        def allowed(name):
            verdicts = views["view"].get("allowed") or {}
            return name in verdicts and not verdicts[name]

        steps = 0
        while len(press_ms) < presses and steps < presses * 30:
            steps += 1
            view = views["view"]
            battle = view.get("battle")
            if battle is None or battle.get("finished"):
                args = dict(SETUP)
                if battle is not None:
                    args["set_aside"] = battle.get("id")
                command("setup", args)
            elif allowed("point"):
                command("point")
            elif allowed("right"):
                command("wrong" if len(press_ms) % 2 else "right")
            elif allowed("reading_done"):
                command("reading_done")
            elif any(p.get("eligible") for p in view.get("players") or []) and view.get("question") and \
                    not view["question"].get("over") and view.get("answerer") is None:
                player = next(p["index"] for p in view["players"] if p.get("eligible"))
                with c["board_seen"]:
                    before = len(c["presses"])
                sent = time.monotonic_ns()
                host.call("simulate", {"player": player, "action": "press"}, namespace="/sim", timeout=5)
                with c["board_seen"]:
                    c["board_seen"].wait_for(lambda: any(flag for _, _, flag in c["presses"][before:]), timeout=5)
                    hit = next(((at, seq) for at, seq, flag in c["presses"][before:] if flag), None)
                host.call("simulate", {"player": player, "action": "release"}, namespace="/sim", timeout=5)
                if hit:
                    press_ms.append((hit[0] - sent) / 1e6)
                    seqs.add(hit[1])
                with changed:
                    changed.wait_for(lambda: views["view"].get("answerer") is not None or allowed("point"),
                                     timeout=2)
            elif allowed("next"):
                command("next")
            else:
                time.sleep(0.05)
    return {"ack_ms": acks, "press_ms": press_ms, "seqs": seqs}
