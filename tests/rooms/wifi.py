"""A Wi-Fi-like link for a station in the rooms' network namespaces (issue 22): delay 5-40 ms with jitter, 2 % loss
in bursts, both ways, on the station's venue link (its host tablet's own link stays clean, as a room's hotspot).

The loss is a Gilbert-Elliott chain per direction, as ``tc netem loss gemodel`` has it: in the good state 1 % of
the packets are lost, one in 500 moves the link into the bad state, where every packet is lost until it leaves it
(one in five per packet: bursts of 5 packets on average); in all about 2 %. Each packet waits 5-40 ms (uniform),
kept in order (a Wi-Fi link retries, it does not reorder).

``tc netem`` where the kernel has it (``netem delay 22.5ms 17.5ms loss gemodel 0.2% 20% 100% 1%`` on both ends of
the link). This sandbox's kernel has no ``sch_netem``, so the same profile runs in user space: the station's switch
port is taken off the bridge and a forwarder (``python -m tests.rooms.wifi IN OUT SEED``, in the switch's
namespace) carries its frames through ``AF_PACKET`` sockets with ``PACKET_VNET_HDR`` (the kernel keeps checksum
and segmentation offloads whole across it) to a second veth pair on the bridge, dropping and delaying them as
above. Cutting the link (:meth:`tests.rooms.netns.Venue.cut`) still pulls the station's own port.
"""

from __future__ import annotations

import collections
import random
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DELAY_MS = (5.0, 40.0)
LOSS_GOOD = 0.01        # lost in the good state
TO_BAD = 0.002          # good -> bad, per packet
TO_GOOD = 0.2           # bad -> good, per packet (every packet in the bad state is lost)
NETEM = ["delay", "22.5ms", "17.5ms", "loss", "gemodel", "0.2%", "20%", "100%", "1%"]

ETH_P_ALL = 3
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_VNET_HDR = 15


def expected_loss() -> float:
    bad = TO_BAD / (TO_BAD + TO_GOOD)
    return LOSS_GOOD * (1 - bad) + bad


class Chain:
    """One direction's Gilbert-Elliott loss and its delays (seeded: a run is repeatable)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.bad = False
        self.last_departure = 0.0
        self.sent = self.lost = 0

    def lose(self) -> bool:
        if self.bad:
            self.bad = self.rng.random() >= TO_GOOD
            lost = True
        else:
            self.bad = self.rng.random() < TO_BAD
            lost = self.rng.random() < LOSS_GOOD
        self.lost += lost
        self.sent += not lost
        return lost

    def departure(self, now: float) -> float:
        self.last_departure = max(self.last_departure, now + self.rng.uniform(*DELAY_MS) / 1000)
        return self.last_departure


def _open(ifname: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    sock.bind((ifname, 0))
    sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP,
                    struct.pack("iHH8s", socket.if_nametoindex(ifname), PACKET_MR_PROMISC, 0, b""))
    return sock


def forward(inner: str, outer: str, seed: int, stats: str = "") -> None:
    """Carry frames between ``inner`` and ``outer`` both ways through the profile until SIGTERM; then write
    ``{"passed", "lost"}`` of both directions to ``stats`` (a JSON file), if given."""
    import json
    import signal

    rng = random.Random(seed)
    ends = (_open(inner), _open(outer))
    chains = (Chain(random.Random(rng.random())), Chain(random.Random(rng.random())))

    def finish(_signal, _frame) -> None:
        if stats:
            Path(stats).write_text(json.dumps({"passed": sum(c.sent for c in chains),
                                               "lost": sum(c.lost for c in chains)}))
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, finish)

    def direction(source: socket.socket, target: socket.socket, chain: Chain) -> None:
        queue: collections.deque = collections.deque()
        ready = threading.Condition()

        def writer() -> None:
            while True:
                with ready:
                    while not queue:
                        ready.wait()
                    departure, frame = queue[0]
                wait = departure - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                with ready:
                    queue.popleft()
                try:
                    target.send(frame)
                except OSError:  # the port is down (a cut): the frame is lost, as on air
                    pass

        threading.Thread(target=writer, daemon=True).start()
        while True:
            frame, address = source.recvfrom(70000)
            if address[2] == socket.PACKET_OUTGOING or chain.lose():
                continue
            with ready:
                queue.append((chain.departure(time.monotonic()), frame))
                ready.notify()

    threading.Thread(target=direction, args=(ends[1], ends[0], chains[1]), daemon=True).start()
    direction(ends[0], ends[1], chains[0])  # the main thread: SIGTERM lands here


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


def has_netem(ns: str) -> bool:
    done = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay",
                           "1ms"], capture_output=True, timeout=30)
    subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True,
                   timeout=30)
    return done.returncode == 0


class WifiProfile:
    """The profile on every station's venue link of a :class:`tests.rooms.netns.Venue`; :meth:`close` ends it."""

    def __init__(self, venue, stations: list[str], seed: int = 22, stats_dir: Path | None = None) -> None:
        self.venue = venue
        self.processes: list[subprocess.Popen] = []
        self.stats_dir = stats_dir
        self.stats: dict[str, dict] = {}  # per station, once closed (the user-space forwarder only)
        self.how = "tc netem" if has_netem(venue.switch) else "user-space forwarder (no sch_netem)"
        for number, name in enumerate(stations, start=1):
            port = venue._ports[name]
            if self.how == "tc netem":
                for ns, dev in ((venue.namespace(name), "eth0"), (venue.switch, port)):
                    subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "netem",
                                    *NETEM], check=True, capture_output=True, timeout=30)
                continue
            inner, outer = f"wi{port}", f"wo{port}"
            _ip("-n", venue.switch, "link", "set", port, "nomaster")
            _ip("-n", venue.switch, "link", "add", inner, "type", "veth", "peer", "name", outer)
            _ip("-n", venue.switch, "link", "set", outer, "master", "br0")
            for dev in (inner, outer):
                _ip("-n", venue.switch, "link", "set", dev, "up")
            stats = str(Path(stats_dir) / f"wifi-{name}.json") if stats_dir else ""
            self.processes.append(subprocess.Popen(
                ["ip", "netns", "exec", venue.switch, sys.executable, "-m", "tests.rooms.wifi", port, inner,
                 str(seed + number), stats], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self._names = getattr(self, "_names", []) + [name]

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self.processes = []
        import json

        for name in getattr(self, "_names", []):
            file = Path(self.stats_dir or ".") / f"wifi-{name}.json"
            if self.stats_dir and file.exists():
                self.stats[name] = json.loads(file.read_text())


if __name__ == "__main__":
    forward(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "")
