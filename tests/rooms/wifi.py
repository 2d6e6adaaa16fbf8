"""A Wi-Fi-like link for a station in the rooms' network namespaces (issue 22): delay 5-40 ms with jitter, 2 % loss
in bursts, both ways, on the station's venue link (its host tablet's own link stays clean, as a room's hotspot).

The loss, per direction: 1.2 % of the packets at random, and bursts of loss in time (one every 20 s on average,
each 50-300 ms, every packet in it lost), about 2 % in all on a busy link. Each packet waits 5-40 ms (uniform),
kept in order (a Wi-Fi link retries, it does not reorder). Bursts are spans of time, not counts of packets: a
per-packet chain (netem's ``gemodel``) keeps an idle link in its bad state until enough packets have passed, so a
TCP handshake's retries, seconds apart, were all lost (measured: a pairing lost for 30 s and more).

``tc netem`` where the kernel has it (``netem delay 22.5ms 17.5ms loss gemodel 0.2% 20% 100% 1%`` on both ends of
the link: the nearest netem has, bursts counted in packets). This sandbox's kernel has no ``sch_netem``, so the same profile runs in user space: the station's switch
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
LOSS_GOOD = 0.012         # lost at random outside a burst
BURST_EVERY_S = 20.0      # a burst of loss starts on average this often (exponential gaps)
BURST_MS = (50.0, 300.0)  # and lasts this long (uniform): every packet in it is lost
NETEM = ["delay", "22.5ms", "17.5ms", "loss", "gemodel", "0.2%", "20%", "100%", "1%"]

ETH_P_ALL = 3
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_VNET_HDR = 15


def expected_loss() -> float:
    """The share lost over a link busy all the time: the random loss plus the time spent in bursts."""
    in_bursts = (sum(BURST_MS) / 2 / 1000) / BURST_EVERY_S
    return LOSS_GOOD * (1 - in_bursts) + in_bursts


class Chain:
    """One direction's loss and delays (seeded: a run is repeatable). Bursts are spans of time, as interference
    is: a link idle through a burst loses nothing, one busy through it loses every packet in it."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.burst_start = self.burst_end = 0.0
        self.last_departure = 0.0
        self.sent = self.lost = 0

    def lose(self, now: float) -> bool:
        while now >= self.burst_end:  # the next burst after the last one that ended
            self.burst_start = max(self.burst_end, now) + self.rng.expovariate(1 / BURST_EVERY_S)
            self.burst_end = self.burst_start + self.rng.uniform(*BURST_MS) / 1000
        lost = now >= self.burst_start or self.rng.random() < LOSS_GOOD
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
            if address[2] == socket.PACKET_OUTGOING:
                continue
            now = time.monotonic()
            if chain.lose(now):
                continue
            with ready:
                queue.append((chain.departure(now), frame))
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
