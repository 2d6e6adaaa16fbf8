"""Online viewers through a NATS cluster the organiser runs, in network namespaces (root; tests/rooms/netns.py).

Namespaces ``n1`` ``n2`` ``n3`` run one cluster node each (:func:`appliance.service.spectators.conf.organiser_node_config`:
routes between them, a leaf port for hubs, a WebSocket port for viewers); ``hub`` runs the box's spectators'
nats-server as ``svoyak spectators`` writes it, its uplink a leaf connection to the three nodes, and the box's
own :class:`~appliance.service.spectators.publisher.Publisher` publishing board updates at a battle's pace (a
``seq``, the box's ``server_now_ns``, a view's worth of changes) with the snapshot every second; ``viewers``
runs the viewers (``tests/crowd.py`` ``online``: raw WebSocket NATS subscribers that move to the next node when
theirs is gone and resync from the snapshot after a gap), a few hundred a process.

The namespaces share the kernel's CLOCK_MONOTONIC, so a viewer's arrival minus the update's ``server_now_ns`` is
its one-way time. :class:`OnlineVenue` is shared by ``tests/rooms/test_online_viewers.py`` and
``bench/bench_online.py``.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from appliance.service.spectators import conf
from tests.rooms import netns

ROOT = Path(__file__).resolve().parents[2]
NODES = ("n1", "n2", "n3")
WS_PORT, LEAF_PORT, CLUSTER_PORT, MONITOR_PORT = 8080, 7422, 6222, 8222
BOX = "svoyak-ONLN"
PER_PROCESS = 250


def _exec(ns: str, argv: list[str], cpus: set[int] | None = None, **kwargs) -> subprocess.Popen:
    """``argv`` in namespace ``ns``; ``cpus``: pinned to those cores (the bench keeps servers and viewers apart)."""
    if cpus:
        kwargs["preexec_fn"] = lambda: os.sched_setaffinity(0, cpus)
    return subprocess.Popen(["ip", "netns", "exec", ns, *argv], **kwargs)


class OnlineVenue:
    """``pinned``: the four servers on the first core, the viewers on the others under SCHED_IDLE (the probes at
    the caller's priority), so the viewers' simulator does not eat the servers' CPU (bench_online)."""

    def __init__(self, prefix: str = "", pinned: bool = False) -> None:
        cores = sorted(os.sched_getaffinity(0))
        self.server_cpus = {cores[0]} if pinned and len(cores) > 1 else None
        self.viewer_cpus = set(cores[1:]) if pinned and len(cores) > 1 else None
        self.prefix = prefix or f"svol{os.getpid() % 10000}"
        self.folder = Path(tempfile.mkdtemp(prefix="svoyak-online-"))
        self.venue = netns.Venue(self.prefix, [*NODES, "hub", "viewers"])
        self.nodes: dict[str, subprocess.Popen] = {}
        self.processes: list[subprocess.Popen] = []
        self.hub_password = secrets.token_urlsafe(12)
        self.route_password = secrets.token_urlsafe(12)
        try:
            for name in NODES:
                self.start_node(name)
            self.hub = self._start_hub()
        except BaseException:
            self.close()
            raise

    def address(self, name: str) -> str:
        return self.venue.addresses[name]

    def start_node(self, name: str) -> None:
        routes = [f"nats-route://route:{self.route_password}@{self.address(other)}:{CLUSTER_PORT}"
                  for other in NODES if other != name]
        text = conf.organiser_node_config(name, self.address(name), routes, {"hub-" + BOX: self.hub_password},
                                          self.route_password, ws_port=WS_PORT, leaf_port=LEAF_PORT,
                                          cluster_port=CLUSTER_PORT, monitor_port=MONITOR_PORT)
        path = self.folder / f"{name}.conf"
        path.write_text(text)
        log = open(self.folder / f"{name}.log", "ab")
        self.nodes[name] = _exec(self.venue.namespace(name), ["nats-server", "-c", str(path)], self.server_cpus,
                                 stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        self._wait_monitor(name)

    def kill_node(self, name: str) -> None:
        self.nodes[name].send_signal(signal.SIGKILL)
        self.nodes[name].wait(timeout=10)

    def _start_hub(self) -> subprocess.Popen:
        uplink = ",".join(f"nats-leaf://hub-{BOX}:{self.hub_password}@{self.address(node)}:{LEAF_PORT}"
                          for node in NODES)
        self.publisher_password = secrets.token_urlsafe(12)
        text = conf.server_config(4290, 8090, self.publisher_password, secrets.token_urlsafe(12), uplink=uplink,
                                  name="hub", monitor_port=MONITOR_PORT)
        path = self.folder / "hub.conf"
        path.write_text(text)
        (self.folder / "publisher.secret").write_text(self.publisher_password)
        log = open(self.folder / "hub.log", "ab")
        process = _exec(self.venue.namespace("hub"), ["nats-server", "-c", str(path)], self.server_cpus,
                        stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        self.processes.append(process)
        self._wait_monitor("hub")
        deadline = time.monotonic() + 20
        while not self.monitor("hub", "leafz").get("leafs"):
            if time.monotonic() > deadline:
                raise TimeoutError("the hub did not leaf-connect to the cluster")
            time.sleep(0.1)
        return process

    def monitor(self, name: str, page: str) -> dict:
        """A monitoring page of a server, read from inside its namespace."""
        done = subprocess.run(["ip", "netns", "exec", self.venue.namespace(name), sys.executable, "-c",
                               "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("
                               f"'http://127.0.0.1:{MONITOR_PORT}/{page}', timeout=5).read().decode())"],
                              capture_output=True, text=True, timeout=20)
        return json.loads(done.stdout) if done.returncode == 0 and done.stdout else {}

    def _wait_monitor(self, name: str, seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while not self.monitor(name, "varz"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}'s nats-server did not start; see {self.folder}/{name}.log")
            time.sleep(0.1)

    def viewers(self, count: int, seconds: float, probes: int = 0) -> list[tuple[subprocess.Popen, Path]]:
        """``count`` viewers spread over the three nodes, in niced processes of :data:`PER_PROCESS`, then
        ``probes`` more in a process of their own at normal priority (``viewers-probes.json``): a viewer's own
        device, not a crowded process."""
        urls = ",".join(f"ws://{self.address(node)}:{WS_PORT}" for node in NODES)
        started = []
        left, number = count, 0
        sizes = []
        while left > 0:
            sizes.append((min(PER_PROCESS, left), f"viewers-{number}.json", True))
            left -= sizes[-1][0]
            number += 1
        if probes:
            sizes.append((probes, "viewers-probes.json", False))
        for size, name, niced in sizes:
            out = self.folder / name
            command = [sys.executable, "-m", "tests.crowd", "online", urls, conf.subject(BOX, "*"), str(size),
                       str(seconds), str(out)]
            low = (["chrt", "--idle", "0"] if self.viewer_cpus else ["nice", "-n", "5"]) if niced else []
            started.append((_exec(self.venue.namespace("viewers"), low + command, self.viewer_cpus, cwd=ROOT), out))
            deadline = time.monotonic() + 120
            if not niced:
                for _, earlier in started:
                    while not Path(str(earlier) + ".ready").exists():
                        if time.monotonic() > deadline:
                            raise TimeoutError("the viewers did not connect")
                        time.sleep(0.1)
        deadline = time.monotonic() + 120
        for _, out in started:
            while not Path(str(out) + ".ready").exists():
                if time.monotonic() > deadline:
                    raise TimeoutError("the viewers did not connect")
                time.sleep(0.1)
        return started

    def publish(self, updates: int, every_ms: int, out: Path) -> subprocess.Popen:
        """The box's publisher in the hub's namespace: ``updates`` board updates, a snapshot every second."""
        return _exec(self.venue.namespace("hub"),
                     [sys.executable, "-m", "tests.rooms.online", "publish", str(self.folder / "publisher.secret"),
                      str(updates), str(every_ms), str(out)], self.server_cpus, cwd=ROOT)

    def close(self) -> None:
        for process in [*self.nodes.values(), *self.processes]:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        self.venue.close()


def stop_viewers(started: list[tuple[subprocess.Popen, Path]]) -> dict:
    for _, out in started:
        Path(str(out) + ".stop").write_text("")
    merged = {"connected": 0, "failed": 0, "viewers": [], "arrivals": {}, "sent_ns": {}, "errors": [], "probes": {}}
    for process, out in started:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        part = json.loads(out.read_text())
        merged["connected"] += part["connected"]
        merged["failed"] += part["failed"]
        merged["viewers"].extend(part.get("viewers", []))
        for seq, times in part["arrivals"].items():
            merged["arrivals"].setdefault(int(seq), []).extend(times)
            if out.name == "viewers-probes.json":
                merged["probes"].setdefault(int(seq), []).extend(times)
        merged["sent_ns"].update({int(seq): at for seq, at in part["sent_ns"].items()})
        merged["errors"].extend(part["errors"])
    return merged


def publish_main(secret: str, updates: int, every_ms: int, out: str) -> int:
    """Board updates through the box's own Publisher: 1..updates, then a last snapshot; counts to ``out``."""
    from appliance.service.spectators.publisher import Publisher

    publisher = Publisher(lambda: 4290, Path(secret), name="svoyak-web")
    deadline = time.monotonic() + 20
    while not publisher.connected and time.monotonic() < deadline:
        time.sleep(0.05)
    update_subject, snapshot_subject = conf.subject(BOX, conf.UPDATE), conf.subject(BOX, conf.SNAPSHOT)
    view = {"scores": [0, 0, 0], "names": ["Аня", "Борис", "Вера"], "pad": "·" * 1500}
    last_snapshot = 0.0
    sent = {"updates": 0, "snapshots": 0, "bytes": 0}

    def message(body: dict) -> bytes:
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        sent["bytes"] += len(data)
        return data

    for seq in range(1, updates + 1):
        view = {**view, "scores": [seq * 10, seq * 20, seq * 30]}
        update = {"seq": seq, "server_now_ns": time.monotonic_ns(), "event": {"type": "Bench"},
                  "changes": {"scores": view["scores"], "pad": view["pad"]}, "removed": []}
        publisher.publish(update_subject, message(update))
        sent["updates"] += 1
        if time.monotonic() - last_snapshot >= 1.0:
            last_snapshot = time.monotonic()
            publisher.publish(snapshot_subject, message({"seq": seq, "server_now_ns": time.monotonic_ns(),
                                                         "view": view}))
            sent["snapshots"] += 1
        time.sleep(every_ms / 1000)
    # the last snapshot, every second for 15 s, as the box goes on publishing its snapshot: a viewer whose node was
    # killed may take seconds to reconnect on a loaded machine (one full run here: 1,000 viewers were still
    # reconnecting when 3 s of it had passed)
    for _ in range(15):
        time.sleep(1.0)
        publisher.publish(snapshot_subject, message({"seq": updates, "server_now_ns": time.monotonic_ns(),
                                                     "view": view}))
        sent["snapshots"] += 1
    time.sleep(0.5)
    sent["published"] = publisher.published
    sent["dropped"] = publisher.dropped
    publisher.close()
    Path(out).write_text(json.dumps(sent))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "publish":
        sys.exit(publish_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]))
