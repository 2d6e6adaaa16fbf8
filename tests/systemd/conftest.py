"""Fixtures for the unit checks: the repo's units parsed, and a fake root that systemd-analyze can verify.

``systemd-analyze verify`` fails a unit whose ExecStart binary does not exist, and this machine has no
/opt/svoyak or cage. The fake root holds the host's stock units (sysinit.target, dbus.socket, ...), ours in
/etc/systemd/system, and an executable stub at every absolute path our units run.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD_DIR = ROOT / "systemd"
UNITS = sorted(path.name for path in SYSTEMD_DIR.glob("*.service"))
# ExecStart=-/usr/sbin/rfkill ...: the prefixes systemd allows before the path (systemd.service(5)).
_EXEC_PATH = re.compile(r"^Exec\w+=[-+!@:]*(/\S+)", re.MULTILINE)


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """A unit file as {section: {key: [values in order]}}; continuation lines joined, comments dropped."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


@pytest.fixture(scope="session")
def units() -> dict[str, dict[str, dict[str, list[str]]]]:
    return {name: parse_unit(SYSTEMD_DIR / name) for name in UNITS}


@pytest.fixture(scope="session")
def systemd_analyze() -> str:
    path = shutil.which("systemd-analyze")
    if path is None:
        pytest.fail("systemd-analyze is missing: ./dev test installs Debian's systemd package")
    return path


@pytest.fixture(scope="session")
def fake_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("root")
    stock = Path("/usr/lib/systemd/system")
    if not stock.is_dir():
        pytest.fail("no /usr/lib/systemd/system: ./dev test installs Debian's systemd package")
    shutil.copytree(stock, root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    for name in UNITS:
        shutil.copy(SYSTEMD_DIR / name, root / "etc/systemd/system" / name)
        for executable in _EXEC_PATH.findall((SYSTEMD_DIR / name).read_text(encoding="utf-8")):
            stub = root / executable.lstrip("/")
            stub.parent.mkdir(parents=True, exist_ok=True)
            stub.write_text("#!/bin/sh\n", encoding="utf-8")
            stub.chmod(0o755)
    return root
