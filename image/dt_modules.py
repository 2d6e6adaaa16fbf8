#!/usr/bin/env python3
"""Which kernel drivers a board needs to mount its SD card root, read from its device tree.

For every enabled MMC host controller in a flattened device tree (``.dtb``), follow what the controller needs
to probe: its own ``compatible``, its parents, and every node it points at (clocks, regulators ``*-supply``,
GPIOs, power domains, resets, mailboxes, DMA, pin control, interrupt parents, ``mmc-pwrseq``, ``firmware``),
then theirs, recursively. Each node's compatible strings go through the kernel's own tables:

- ``modules.alias`` (``of:N*T*C<compatible>`` patterns): a loadable module the initrd must hold;
- ``modules.builtin.modinfo``: a driver built into the kernel;
- the string in the kernel image itself: an early built-in driver (``CLK_OF_DECLARE``, ``IRQCHIP_DECLARE``,
  bus code) that has no alias;
- none of these ("no alias"): no driver of its own in this kernel.

Run by ``./dev image`` against the image's own kernel (image/README.md, "What mounts the root"):

    dt_modules.py --root ROOTFS --kernel VERSION --modules image/initramfs-modules [--record FILE] DTB...

prints each controller's closure, writes ``--record`` (the committed summary the fast tests check), and exits
1 when ``--modules`` lacks a module a device tree needs. ``--report DTB`` prints the closure of every enabled
node whose driver is missing (used for the Pi 5 notes), without checking.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import gzip
import re
import struct
import sys
from pathlib import Path

FDT_MAGIC = 0xD00DFEED
FDT_BEGIN_NODE, FDT_END_NODE, FDT_PROP, FDT_NOP, FDT_END = 1, 2, 3, 4, 9

# Properties that hold phandles: name -> the "#...-cells" property of the target giving each entry's arguments
# (None: a single phandle, or a list of bare phandles).
PHANDLE_LISTS = {
    "clocks": "#clock-cells", "power-domains": "#power-domain-cells", "resets": "#reset-cells",
    "mboxes": "#mbox-cells", "dmas": "#dma-cells", "interrupts-extended": "#interrupt-cells",
    "phys": "#phy-cells", "interrupt-parent": None, "mmc-pwrseq": None, "firmware": None,
}


class DeviceTreeError(ValueError):
    """Not a flattened device tree, or a truncated one."""


@dataclasses.dataclass
class Node:
    name: str
    parent: "Node | None"
    props: dict = dataclasses.field(default_factory=dict)
    children: list = dataclasses.field(default_factory=list)

    @property
    def path(self) -> str:
        if self.parent is None:
            return "/"
        parent = self.parent.path
        return f"{parent.rstrip('/')}/{self.name}"

    def strings(self, name: str) -> list[str]:
        value = self.props.get(name)
        return [] if not value else [part.decode("ascii", "replace") for part in value.rstrip(b"\0").split(b"\0")]

    def cells(self, name: str) -> list[int]:
        value = self.props.get(name, b"")
        return list(struct.unpack(f">{len(value) // 4}I", value[:len(value) // 4 * 4]))

    @property
    def enabled(self) -> bool:
        return self.strings("status") in ([], ["okay"], ["ok"])

    def modalias(self) -> str:
        """The string the kernel matches ``of:`` aliases against (drivers/of/device.c)."""
        name = self.name.split("@", 1)[0]
        kind = (self.strings("device_type") or ["<NULL>"])[0]
        return f"of:N{name}T{kind}" + "".join(f"C{compatible}" for compatible in self.strings("compatible"))


def parse_dtb(blob: bytes) -> Node:
    """The tree of a flattened device tree blob (devicetree specification, chapter 5)."""
    if len(blob) < 40 or struct.unpack_from(">I", blob)[0] != FDT_MAGIC:
        raise DeviceTreeError("not a flattened device tree (bad magic)")
    _, total, off_struct, off_strings, _, _, _, _, size_strings, size_struct = struct.unpack_from(">10I", blob)
    if total > len(blob):
        raise DeviceTreeError(f"truncated device tree: {len(blob)} of {total} bytes")
    strings = blob[off_strings:off_strings + size_strings]
    position, end = off_struct, off_struct + size_struct
    root = None
    node = None
    while position < end:
        (token,) = struct.unpack_from(">I", blob, position)
        position += 4
        if token == FDT_BEGIN_NODE:
            stop = blob.index(b"\0", position)
            child = Node(blob[position:stop].decode("ascii", "replace"), node)
            if node is None:
                root = child
            else:
                node.children.append(child)
            node = child
            position = (stop + 1 + 3) & ~3
        elif token == FDT_END_NODE:
            node = node.parent
        elif token == FDT_PROP:
            length, name_offset = struct.unpack_from(">II", blob, position)
            position += 8
            name = strings[name_offset:strings.index(b"\0", name_offset)].decode("ascii", "replace")
            node.props[name] = blob[position:position + length]
            position = (position + length + 3) & ~3
        elif token == FDT_NOP:
            continue
        elif token == FDT_END:
            break
        else:
            raise DeviceTreeError(f"bad token {token} at offset {position - 4}")
    if root is None:
        raise DeviceTreeError("empty device tree")
    return root


def walk(node: Node):
    yield node
    for child in node.children:
        yield from walk(child)


def is_gpio_property(name: str) -> bool:
    return name in ("gpios", "gpio") or name.endswith("-gpios") or name.endswith("-gpio")


def referenced(node: Node, by_phandle: dict[int, Node]) -> list[tuple[str, Node]]:
    """(property, target) for every phandle ``node`` holds."""
    found = []
    for name in node.props:
        if name in PHANDLE_LISTS or name.endswith("-supply") or is_gpio_property(name) \
                or re.fullmatch(r"pinctrl-\d+", name):
            count = PHANDLE_LISTS.get(name) or ("#gpio-cells" if is_gpio_property(name) else None)
            cells = node.cells(name)
            index = 0
            while index < len(cells):
                target = by_phandle.get(cells[index])
                index += 1
                if target is None:
                    continue  # 0 = an empty slot in a gpio list
                found.append((name, target))
                if count is not None:
                    index += (target.cells(count) or [0])[0]
    if "interrupts" in node.props and "interrupt-parent" not in node.props:
        ancestor = node.parent
        while ancestor is not None and "interrupt-parent" not in ancestor.props:
            ancestor = ancestor.parent
        if ancestor is not None:
            target = by_phandle.get(ancestor.cells("interrupt-parent")[0])
            if target is not None:
                found.append(("interrupt-parent (inherited)", target))
    return found


@dataclasses.dataclass
class Kernel:
    """A kernel's driver tables, from an installed root (``lib/modules/VERSION``, ``boot/vmlinuz-VERSION``)."""

    aliases: list  # (compiled pattern, alias, module)
    builtin: list  # (compiled pattern, alias, module)
    image: bytes
    paths: dict  # module name -> its path in the kernel tree (kernel/drivers/mmc/host/sdhci-iproc.ko)
    built_in: set  # names of the modules built into the kernel (modules.builtin)

    @classmethod
    def load(cls, root: Path, version: str) -> "Kernel":
        modules = root / "lib/modules" / version
        aliases = []
        for line in (modules / "modules.alias").read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "alias" and parts[1].startswith("of:"):
                aliases.append((re.compile(fnmatch.translate(parts[1])), parts[1], parts[2]))
        builtin = []
        info = modules / "modules.builtin.modinfo"
        for entry in (info.read_bytes().split(b"\0") if info.exists() else []):
            key, _, value = entry.decode("ascii", "replace").partition("=")
            if key.endswith(".alias") and value.startswith("of:"):
                builtin.append((re.compile(fnmatch.translate(value)), value, key[:-len(".alias")]))
        vmlinuz = (root / "boot" / f"vmlinuz-{version}").read_bytes()
        image = gzip.decompress(vmlinuz) if vmlinuz[:2] == b"\x1f\x8b" else vmlinuz
        paths, built_in = {}, set()
        for listing in ("modules.dep", "modules.builtin"):
            if (modules / listing).exists():
                for line in (modules / listing).read_text(errors="replace").splitlines():
                    path = line.split(":", 1)[0].strip()
                    if path:
                        name = Path(path).name.split(".ko", 1)[0].replace("-", "_")
                        paths[name] = path
                        if listing == "modules.builtin":
                            built_in.add(name)
        return cls(aliases, builtin, image, paths, built_in)

    def drivers(self, node: Node) -> tuple[str, list[str]]:
        """("module", names) | ("built-in", names) | ("early built-in", [compatible]) | ("no alias", []).

        "no alias": no driver of its own in this kernel; either none at all, or a part that another driver
        binds (vc4's DSI encoders) or that only describes (pin configurations, /clocks)."""
        alias = node.modalias()
        modules = sorted({module for pattern, _, module in self.aliases if pattern.fullmatch(alias)})
        if modules:
            return "module", modules
        builtin = sorted({module for pattern, _, module in self.builtin if pattern.fullmatch(alias)})
        if builtin:
            return "built-in", builtin
        for compatible in node.strings("compatible"):
            if b"\0" + compatible.encode() + b"\0" in self.image:
                return "early built-in", [compatible]
        return "no alias", []


def closure(start: Node, by_phandle: dict[int, Node]) -> list[tuple[Node, str]]:
    """Every node ``start`` needs, with the reason (the property that led there), in visiting order."""
    seen: dict[str, tuple[Node, str]] = {}
    pending = [(start, "SD host")]
    while pending:
        node, why = pending.pop(0)
        if node.path in seen:
            continue
        seen[node.path] = (node, why)
        if node.parent is not None and node.parent.parent is not None:
            pending.append((node.parent, f"parent of {node.name}"))
        for name, target in referenced(node, by_phandle):
            pending.append((target, f"{name} of {node.name}"))
    return list(seen.values())


def phandles(root: Node) -> dict[int, Node]:
    table = {}
    for node in walk(root):
        for name in ("phandle", "linux,phandle"):
            if name in node.props:
                table[node.cells(name)[0]] = node
    return table


def mmc_hosts(root: Node, kernel: Kernel) -> list[Node]:
    """Enabled nodes driven by an MMC host driver (the SD card's and, on a Pi 3/4, the Wi-Fi's SDIO)."""
    hosts = []
    for node in walk(root):
        if not node.enabled or not node.strings("compatible"):
            continue
        if any(not ancestor.enabled for ancestor in _ancestors(node)):
            continue
        kind, names = kernel.drivers(node)
        if kind in ("module", "built-in") and any(
                "/drivers/mmc/host/" in kernel.paths.get(name.replace("-", "_"), "") for name in names):
            hosts.append(node)
    return hosts


def _ancestors(node: Node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def read_module_list(path: Path) -> set[str]:
    """The module names of an initramfs-tools ``modules`` file (comments and options dropped), ``-`` = ``_``."""
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(line.split()[0].replace("-", "_"))
    return names


def check(root: Path, version: str, dtbs: list[str], listed: set[str], always: set[str]) -> tuple[list, set]:
    """Per device tree, the closure of each SD host; and the modules they need (plus ``always``)."""
    kernel = Kernel.load(root, version)
    reports, needed = [], {name for name in always if name.replace("-", "_") not in kernel.built_in}
    for name in dtbs:
        tree = parse_dtb((root / "usr/lib" / f"linux-image-{version}" / name).read_bytes())
        table = phandles(tree)
        model = (tree.strings("model") or ["?"])[0]
        for host in mmc_hosts(tree, kernel):
            rows = []
            for node, why in closure(host, table):
                kind, names = kernel.drivers(node)
                compatible = ",".join(node.strings("compatible")[:1]) or "-"
                rows.append((node.path, compatible, kind, names, why))
                if kind == "module":
                    needed.update(module.replace("-", "_") for module in names)
            reports.append((name, model, host.path, rows))
    return reports, needed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the image's root directory")
    parser.add_argument("--kernel", required=True, help="kernel version (lib/modules/VERSION)")
    parser.add_argument("--modules", type=Path, help="initramfs-tools modules file to check")
    parser.add_argument("--always", default="mmc_block,ext4",
                        help="modules needed whatever the tree says, unless built in (default: %(default)s)")
    parser.add_argument("--record", type=Path, help="write the summary here")
    parser.add_argument("--report", action="store_true", help="list enabled nodes without a driver instead")
    parser.add_argument("dtbs", nargs="+", help="device trees, relative to usr/lib/linux-image-VERSION")
    args = parser.parse_args(argv)
    if args.report:
        kernel = Kernel.load(args.root, args.kernel)
        for name in args.dtbs:
            tree = parse_dtb((args.root / "usr/lib" / f"linux-image-{args.kernel}" / name).read_bytes())
            print(f"{name}: {(tree.strings('model') or ['?'])[0]}")
            for node in walk(tree):
                if node.strings("compatible") and node.enabled and all(a.enabled for a in _ancestors(node)):
                    kind, names = kernel.drivers(node)
                    print(f"  {kind:15} {' '.join(names) or '-':24} {node.path} ({node.strings('compatible')[0]})")
        return 0
    always = {name for name in args.always.split(",") if name}
    reports, needed = check(args.root, args.kernel, args.dtbs, set(), always)
    lines = [f"# What mounts the SD card root, from the device trees of kernel {args.kernel} (image/dt_modules.py).",
             "# ./dev image rewrites this file; tests/image/test_dt_modules.py checks image/initramfs-modules against it."]
    for name, model, host, rows in reports:
        lines.append(f"dtb {name} ({model}) host {host}")
        for path, compatible, kind, names, why in rows:
            lines.append(f"  {kind:15} {' '.join(names) or '-':22} {compatible:32} {path}  <- {why}")
    lines.append("needs " + " ".join(sorted(needed)))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.record:
        args.record.write_text(text)
    if args.modules:
        missing = sorted(needed - read_module_list(args.modules))
        if missing:
            print(f"dt_modules: {args.modules} lacks {', '.join(missing)}", file=sys.stderr)
            return 1
        print(f"dt_modules: {args.modules} holds every module the device trees need")
    return 0


if __name__ == "__main__":
    sys.exit(main())
