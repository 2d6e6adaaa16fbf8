#!/usr/bin/env python3
"""What the card boots, read from the card itself, and what a boot's serial log says (image/image-test.sh).

The QEMU tests boot what is flashed: the kernel command line is the card's own ``cmdline.txt`` and the kernel,
initrd and device tree are the files the card's ``config.txt`` names on its FAT boot partition (read with
mtools, no mount), plus only the test-only arguments listed in :data:`TEST_ONLY` (none of them changes the
root, the consoles' order or a timeout). The raspi3b board gets the card's command line as it is; QEMU's virt
board, which has no Pi UART nor HDMI, gets its own serial port as an extra console put FIRST, so the card's
last console (tty1, the HDMI screen) stays ``/dev/console`` there too.

    python3 image/cardboot.py files IMAGE DEST --board raspi3b|virt [--append ARG]...
        copies cmdline.txt, config.txt, the kernel, the initrd and (raspi3b) the device tree out of the image's
        boot partition into DEST and prints shell assignments: kernel= initrd= dtb= append= ignored=
    python3 image/cardboot.py check-card BOOT_DIR     the boot files as image/image.sh made them (exit 1: why)
    python3 image/cardboot.py check-log SERIAL_LOG    the boot's problems, one a line (exit 1 if any)
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

# Test-only kernel arguments, by prefix: what the tests may add to the card's command line, and why.
TEST_ONLY = {
    "systemd.wants=": "pulls in the boot report / GPIO report units (never enabled on a box)",
    "systemd.setenv=": "test settings for the services (mock pins on virt, the PL061 pins for --gpio)",
    "systemd.journald.forward_to_kmsg=": "systemd's and the units' messages reach the serial log",
    "systemd.journald.max_level_kmsg=": "the units' output too (first boot's network and PIN are info)",
    "printk.devkmsg=": "no rate limit on what the units write to /dev/kmsg (the reports)",
    "modprobe.blacklist=cdc_subset": "QEMU's usb-net on raspi3b (image-test.sh, --raspi)",
}
# The serial port QEMU's virt board has (a PL011): an extra console, put first.
VIRT_CONSOLE = "console=ttyAMA0"
# What the card must say (check_card): the person reads the HDMI screen; the root is checked before it is
# mounted, repairs made without asking; the root found by label whatever the card reader calls it.
CARD_MUST = ("root=LABEL=svoyak-root", "fsck.repair=yes", "rootwait", "consoleblank=0")
HDMI_CONSOLES = ("console=tty1", "console=tty0")
# config.txt sections that apply to a Raspberry Pi 3 Model B (QEMU's raspi3b)
PI3_FILTERS = {"all", "pi3"}
# The upstream kernel's device tree the firmware loads for a Pi 3 B when config.txt says upstream_kernel=1
PI3_UPSTREAM_DTB = "bcm2837-rpi-3-b.dtb"


class CardError(Exception):
    pass


# --- the command line ------------------------------------------------------------------------------------------

def consoles(args: list[str]) -> list[str]:
    return [arg for arg in args if arg.startswith("console=")]


def is_test_only(arg: str) -> bool:
    return any(arg.startswith(prefix) for prefix in TEST_ONLY)


def compose(card: str, board: str, extra: list[str]) -> list[str]:
    """The test's kernel command line: the card's, unchanged and in its order, plus test-only arguments."""
    refused = [arg for arg in extra if not is_test_only(arg)]
    if refused:
        raise CardError(f"not a test-only kernel argument (image/cardboot.py TEST_ONLY): {' '.join(refused)}")
    args = card.split()
    if board == "virt":
        return [VIRT_CONSOLE, *args, *extra]
    if board == "raspi3b":
        return [*args, *extra]
    raise CardError(f"unknown board {board!r}: raspi3b or virt")


def disagreements(card: str, test: list[str], board: str) -> list[str]:
    """Where the test's command line differs from the card's beyond the test-only arguments: [] if nowhere."""
    card_args = card.split()
    problems = []
    rest = list(test)
    if board == "virt" and rest[:1] == [VIRT_CONSOLE]:
        rest = rest[1:]
    own = [arg for arg in rest if not is_test_only(arg)]
    if own != card_args:
        problems.append(f"the test boots {' '.join(own)!r}, the card says {' '.join(card_args)!r}")
    if consoles(card_args) and consoles(test)[-1:] != consoles(card_args)[-1:]:
        problems.append(f"/dev/console differs: the test's last console is {consoles(test)[-1:]}, "
                        f"the card's {consoles(card_args)[-1:]}")
    return problems


def check_cmdline(card: str) -> list[str]:
    """What the card's cmdline.txt must hold for a box without keyboard in front of a person: [] if all."""
    args = card.split()
    problems = []
    if "\n" in card.strip():
        problems.append("cmdline.txt must be one line")
    for needed in CARD_MUST:
        if needed not in args:
            problems.append(f"cmdline.txt lacks {needed}")
    last = consoles(args)[-1:]
    if not last or last[0] not in HDMI_CONSOLES:
        problems.append(f"the last console= (/dev/console, where first boot and the emergency shell speak) is "
                        f"{last[0] if last else 'none'}, not the HDMI screen (tty1)")
    flags = [arg for arg in args if arg in ("ro", "rw")]
    if flags and flags[-1] == "rw" and "fsck.repair=yes" not in args:
        problems.append("a read-write root with no fsck.repair=yes: a power cut is never repaired")
    return problems


# --- config.txt --------------------------------------------------------------------------------------------------

def parse_config(text: str, filters=PI3_FILTERS) -> dict:
    """The lines of config.txt that apply to the board (sections [all], [pi3]), as the firmware reads them.

    Returns ``{"kernel", "initramfs", "device_tree", "arm_64bit", "upstream_kernel", "lines"}``: ``lines`` holds
    every other applicable setting, in order.
    """
    applies = True
    found = {"kernel": None, "initramfs": None, "device_tree": None, "arm_64bit": False, "upstream_kernel": False,
             "lines": []}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        section = re.fullmatch(r"\[(.+)\]", line)
        if section:
            applies = section.group(1).strip().lower() in filters
            continue
        if not applies:
            continue
        if line.startswith("initramfs "):
            found["initramfs"] = line.split()[1]
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if key == "kernel":
            found["kernel"] = value
        elif key == "device_tree":
            found["device_tree"] = value
        elif key in ("arm_64bit", "upstream_kernel"):
            found[key] = value == "1"
        else:
            found["lines"].append(line)
    return found


def boot_plan(config_text: str, board: str) -> dict:
    """Which files of the boot partition QEMU loads for ``board``, and the config.txt lines it cannot honour."""
    config = parse_config(config_text)
    if not config["arm_64bit"]:
        raise CardError("config.txt lacks arm_64bit=1: the Pi would boot the kernel in 32-bit mode; "
                        "qemu-system-aarch64 cannot")
    if not config["kernel"] or not config["initramfs"]:
        raise CardError("config.txt names no kernel= or no initramfs: the firmware would not find them")
    dtb = None
    if board == "raspi3b":
        dtb = config["device_tree"] or (PI3_UPSTREAM_DTB if config["upstream_kernel"] else None)
        if dtb is None:
            raise CardError("config.txt: no device_tree= and no upstream_kernel=1: the Pi's firmware would make "
                            "its own tree, which QEMU cannot")
    # What QEMU honours: arm_64bit (an aarch64 CPU), kernel=, initramfs, the device tree. The rest is the
    # firmware's own business (enable_uart: QEMU's UARTs are always on).
    return {"kernel": config["kernel"], "initrd": config["initramfs"], "dtb": dtb, "ignored": config["lines"]}


# --- the card's boot partition ---------------------------------------------------------------------------------

def boot_partition_offset(image: Path) -> int:
    table = json.loads(subprocess.run(["sfdisk", "-J", str(image)], capture_output=True, text=True,
                                      check=True).stdout)["partitiontable"]
    first = table["partitions"][0]
    if first["type"] not in ("c", "b", "e"):
        raise CardError(f"{image}: partition 1 is type {first['type']}, not FAT: the Pi's boot ROM reads FAT")
    return first["start"] * table.get("sectorsize", 512)


def copy_out(image: Path, offset: int, names: list[str], dest: Path) -> None:
    for name in names:
        result = subprocess.run(["mcopy", "-o", "-n", "-i", f"{image}@@{offset}", f"::{name}", str(dest / name)],
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise CardError(f"the card's boot partition has no {name}: {result.stderr.strip()}")


def files(image: Path, dest: Path, board: str, extra: list[str]) -> dict:
    dest.mkdir(parents=True, exist_ok=True)
    offset = boot_partition_offset(image)
    copy_out(image, offset, ["cmdline.txt", "config.txt"], dest)
    card = (dest / "cmdline.txt").read_text(encoding="utf-8").strip()
    plan = boot_plan((dest / "config.txt").read_text(encoding="utf-8"), board)
    copy_out(image, offset, [plan["kernel"], plan["initrd"], *([plan["dtb"]] if plan["dtb"] else [])], dest)
    test = compose(card, board, extra)
    problems = disagreements(card, test, board)
    if problems:
        raise CardError("; ".join(problems))
    return {"kernel": str(dest / plan["kernel"]), "initrd": str(dest / plan["initrd"]),
            "dtb": str(dest / plan["dtb"]) if plan["dtb"] else "", "append": " ".join(test),
            "card": card, "ignored": "; ".join(plan["ignored"])}


def check_card(boot_dir: Path) -> list[str]:
    boot_dir = Path(boot_dir)
    card = (boot_dir / "cmdline.txt").read_text(encoding="utf-8")
    problems = check_cmdline(card)
    try:
        plan = boot_plan((boot_dir / "config.txt").read_text(encoding="utf-8"), "raspi3b")
    except CardError as error:
        return [*problems, str(error)]
    for name in (plan["kernel"], plan["initrd"], plan["dtb"]):
        if not (boot_dir / name).is_file():
            problems.append(f"config.txt names {name}, which is not on the boot partition")
    return problems


# --- the serial log ----------------------------------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# (pattern, what it means): each match is a problem of the boot
LOG_PROBLEMS = (
    (re.compile(r"Dependency failed for ([^\n]*?)\.?$", re.MULTILINE), "dependency failed: {}"),
    (re.compile(r"Failed to (?:start|mount) ([^\n]*?)\.?$", re.MULTILINE), "failed to start: {}"),
    (re.compile(r"Timed out waiting for device ([^\n]*?)\.?$", re.MULTILINE), "device never came: {}"),
    (re.compile(r"(emergency mode|Reached target [^\n]*[Ee]mergency|emergency\.target|rescue\.target)"),
     "emergency mode: {}"),
    (re.compile(r"(Gave up waiting for root|requires a manual fsck|\(initramfs\))"), "stuck in the initrd: {}"),
)
REPORT = re.compile(r"svoyak-bootreport:[^\n]*? end")


def report_fields(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)


def check_log(text: str) -> tuple[str, list[str]]:
    """The boot report line (or "") and every problem the serial log shows: a failed dependency, a unit that
    failed or never started, a device that never came, emergency mode, the initrd's shell."""
    text = ANSI.sub("", text).replace("\r", "")
    problems = []
    for pattern, words in LOG_PROBLEMS:
        for match in pattern.finditer(text):
            problem = words.format(match.group(1).strip())
            if problem not in problems:
                problems.append(problem)
    reports = REPORT.findall(text)
    report = reports[0] if reports else ""
    if not report:
        problems.append("no boot report: the boot never finished (or the report unit never ran)")
    else:
        fields = report_fields(report)
        for key, words in (("failed", "unit failed: {}"), ("never", "unit never started: {}")):
            for unit in filter(None, fields.get(key, "").split(",")):
                problems.append(words.format(unit))
    return report, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    files_parser = commands.add_parser("files")
    files_parser.add_argument("image", type=Path)
    files_parser.add_argument("dest", type=Path)
    files_parser.add_argument("--board", required=True, choices=("raspi3b", "virt"))
    files_parser.add_argument("--append", action="append", default=[])
    card_parser = commands.add_parser("check-card")
    card_parser.add_argument("boot_dir", type=Path)
    log_parser = commands.add_parser("check-log")
    log_parser.add_argument("log", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "files":
            found = files(args.image, args.dest, args.board, [arg for value in args.append for arg in value.split()])
            for key, value in found.items():
                print(f"{key}={shlex.quote(value)}")
            return 0
        if args.command == "check-card":
            problems = check_card(args.boot_dir)
            for problem in problems:
                print(f"cardboot: {args.boot_dir}: {problem}", file=sys.stderr)
            return 1 if problems else 0
        report, problems = check_log(args.log.read_text(encoding="utf-8", errors="replace"))
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    except (CardError, OSError, subprocess.CalledProcessError) as error:
        print(f"cardboot: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
