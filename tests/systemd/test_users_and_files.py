"""sysusers, tmpfiles and the udev rules: applied to an empty root by systemd's own tools."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.systemd.conftest import SYSTEMD_DIR


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: ./dev test installs Debian's systemd package")
    return path


def read_table(path) -> dict[str, list[str]]:
    return {line.split(":")[0]: line.split(":") for line in path.read_text(encoding="utf-8").splitlines()}


def test_sysusers_makes_the_service_users_and_groups(tmp_path):
    (tmp_path / "etc").mkdir()
    result = subprocess.run([tool("systemd-sysusers"), f"--root={tmp_path}", str(SYSTEMD_DIR / "svoyak.sysusers")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    users, groups = read_table(tmp_path / "etc/passwd"), read_table(tmp_path / "etc/group")
    # System users with no login shell, homes in their state directories.
    assert users["svoyak"][5:] == ["/var/lib/svoyak", "/usr/sbin/nologin"]
    assert users["svoyak-kiosk"][5:] == ["/var/lib/svoyak-kiosk", "/usr/sbin/nologin"]
    assert int(users["svoyak"][2]) < 1000 and int(users["svoyak-kiosk"][2]) < 1000
    # gpio exists for the capture unit's SupplementaryGroups=; svoyak itself is not a member (capture only).
    assert groups["gpio"][3] == ""
    for seat_group in ("video", "render", "input"):
        assert groups[seat_group][3] == "svoyak-kiosk"


def test_tmpfiles_makes_the_config_directory(tmp_path):
    result = subprocess.run([tool("systemd-tmpfiles"), f"--root={tmp_path}", "--create",
                             str(SYSTEMD_DIR / "svoyak.tmpfiles")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "etc/svoyak").is_dir()
    assert oct((tmp_path / "etc/svoyak").stat().st_mode & 0o777) == "0o755"


@pytest.mark.parametrize("rules", sorted(path.name for path in SYSTEMD_DIR.glob("*.rules")))
def test_udev_rules_parse(rules, tmp_path):
    """udevadm test-builtin cannot load a file alone on systemd 252; udevadm's own rules parser runs through
    `udevadm verify` from 254 on. Here: every line is a comment or comma-separated KEY op "value" pairs."""
    udevadm = shutil.which("udevadm")
    verify = subprocess.run([udevadm, "verify", "--help"], capture_output=True, check=False) if udevadm else None
    if verify is not None and verify.returncode == 0:
        result = subprocess.run([udevadm, "verify", str(SYSTEMD_DIR / rules)], capture_output=True, text=True,
                                check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        return
    pair = re.compile(r'\s*[A-Z_]+(\{[^}]+\})?\s*(==|!=|\+=|-=|:=|=)\s*"[^"]*"\s*')
    for line in (SYSTEMD_DIR / rules).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            assert all(pair.fullmatch(part) for part in line.split(",")), line
