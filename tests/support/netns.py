"""Rooms as network namespaces: a "switch" namespace with a bridge, and one namespace per box (and one for the
test's driver) joined to it by a veth pair. Root only; everything lives in namespaces made here and is removed
by :meth:`Venue.close`. Nothing touches the root namespace's interfaces.
"""

from __future__ import annotations

import os
import shutil
import subprocess

SUBNET = "10.77.0"


def can_run() -> str:
    """Empty if namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root (ip netns)"
    for tool in ("ip", "tc", "nft"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (./dev test installs iproute2 and nftables)"
    return ""


def _ip(*args: str) -> None:
    _run(["ip", *args])


def _run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True, timeout=30)


class Venue:
    """``names`` get namespaces ``<prefix>-<name>`` with ``eth0`` at 10.77.0.<n>/24 on one bridge."""

    def __init__(self, prefix: str, names: list[str]) -> None:
        self.prefix = prefix
        self.switch = f"{prefix}-lan"
        self.addresses: dict[str, str] = {}
        self.made: list[str] = []
        try:
            _ip("netns", "add", self.switch)
            self.made.append(self.switch)
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "up")
            for number, name in enumerate(names, start=1):
                self.add(name, number)
        except BaseException:
            self.close()
            raise

    def namespace(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def add(self, name: str, number: int) -> None:
        ns = self.namespace(name)
        _ip("netns", "add", ns)
        self.made.append(ns)
        port = f"p{number}"
        _ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _ip("-n", self.switch, "link", "set", port, "master", "br0")
        _ip("-n", self.switch, "link", "set", port, "up")
        _ip("-n", ns, "addr", "add", f"{SUBNET}.{number}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        self.addresses[name] = f"{SUBNET}.{number}"
        self._ports = getattr(self, "_ports", {})
        self._ports[name] = port

    def tablet_link(self, name: str, number: int, tablet: str = "ctl") -> str:
        """A direct link between a box and the namespace of its host tablet (the box's own hotspot in a room):
        cutting the box's venue link leaves the room playing. Returns the box's address on it."""
        box, pad = self.namespace(name), self.namespace(tablet)
        _ip("-n", pad, "link", "add", f"t{number}", "type", "veth", "peer", "name", "tab0", "netns", box)
        _ip("-n", pad, "addr", "add", f"10.78.{number}.1/24", "dev", f"t{number}")
        _ip("-n", box, "addr", "add", f"10.78.{number}.2/24", "dev", "tab0")
        _ip("-n", pad, "link", "set", f"t{number}", "up")
        _ip("-n", box, "link", "set", "tab0", "up")
        return f"10.78.{number}.2"

    def cut(self, name: str) -> None:
        """Pull the box's cable out (its switch port goes down)."""
        _ip("-n", self.switch, "link", "set", self._ports[name], "down")

    def mend(self, name: str) -> None:
        _ip("-n", self.switch, "link", "set", self._ports[name], "up")

    def lossy(self, name: str, loss_percent: int) -> str:
        """Drop ``loss_percent`` of what the box sends on its venue link (0: none); returns how.

        ``tc netem`` where the kernel has it; else an nftables rule in the box's namespace that drops the same
        share at random (this sandbox's kernel has no sch_netem)."""
        return set_loss(self.namespace(name), loss_percent)

    def close(self) -> None:
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        self.made = []


def set_loss(ns: str, loss_percent: int) -> str:
    subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "eth0", "root"], capture_output=True,
                   timeout=30)
    subprocess.run(["ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "svoyakloss"], capture_output=True,
                   timeout=30)
    if not loss_percent:
        return "none"
    done = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "eth0", "root", "netem", "loss",
                           f"{loss_percent}%"], capture_output=True, text=True, timeout=30)
    if done.returncode == 0:
        return "tc netem"
    rules = ("table inet svoyakloss {\n chain out {\n  type filter hook output priority 0;\n"
             f'  oifname "eth0" numgen random mod 100 < {int(loss_percent)} drop\n }}\n}}\n')
    subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=rules, check=True, capture_output=True,
                   text=True, timeout=30)
    return "nftables numgen"
