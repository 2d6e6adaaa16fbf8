"""image/refresh.sh on a small disk laid out like ./dev image's (boot, root): the root's copies of what
install-box.sh installs from systemd/ become this worktree's, with their modes; nothing else changes; a file the
disk lacks is refused (that is ./dev image)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "image/refresh.sh"
MB = 1024 * 1024


def run(*command, **options):
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120, **options)


def installed_from_systemd() -> dict[str, tuple[Path, int]]:
    """What install-box.sh installs from systemd/: destination -> (source, mode), read from the script itself."""
    script = (ROOT / "image/install-box.sh").read_text(encoding="utf-8")
    plan = {destination: (ROOT / "systemd" / source, int(mode, 8)) for mode, source, destination in
            re.findall(r'^ *install -D -m ([0-7]+) "\$BUNDLE/systemd/([^"]+)" (\S+)$', script, re.MULTILINE)}
    assert 'for unit in "$BUNDLE"/systemd/*.service; do' in script
    for unit in (ROOT / "systemd").glob("*.service"):
        plan[f"/usr/lib/systemd/system/{unit.name}"] = (unit, 0o644)
    return plan


def disk_holding(tmp_path: Path, tree: Path) -> tuple[Path, str]:
    root = tmp_path / "root.ext4"
    assert run("mkfs.ext4", "-q", "-d", str(tree), str(root), "24M").returncode == 0
    image = tmp_path / "svoyak.img"
    with image.open("wb") as file:
        file.truncate((4 + 8 + 24) * MB)
        file.seek(12 * MB)
        file.write(root.read_bytes())
    layout = "label: dos\nstart=4MiB, size=8MiB, type=c, bootable\nstart=12MiB, size=24MiB, type=83\n"
    assert run("sfdisk", "-q", str(image), input=layout).returncode == 0
    return image, f"{image}?offset={12 * MB}"


def on_disk(root: str, path: str) -> tuple[str, str]:
    content = run("debugfs", "-R", f"cat {path}", root).stdout
    mode = re.search(r"Mode: +(\d+)", run("debugfs", "-R", f"stat {path}", root).stdout).group(1)
    return content, mode


@pytest.fixture
def stale_tree(tmp_path) -> Path:
    for tool in ("sfdisk", "mkfs.ext4", "debugfs", "e2fsck"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: ./dev test installs fdisk and e2fsprogs")
    tree = tmp_path / "tree"
    (tree / "etc").mkdir(parents=True)
    (tree / "etc/fstab").write_text("LABEL=svoyak-root / ext4 defaults 0 1\n", encoding="utf-8")
    for destination, (source, mode) in installed_from_systemd().items():
        target = tree / destination.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        target.chmod(mode)
    # the boot report as the closing image had it, the capture unit with a wrong mode
    (tree / "usr/local/lib/svoyak/boot-report").write_text("#!/bin/sh\necho old report\n", encoding="utf-8")
    (tree / "usr/local/lib/svoyak/boot-report").chmod(0o755)
    (tree / "usr/lib/systemd/system/svoyak-capture.service").write_text("[Unit]\n", encoding="utf-8")
    (tree / "usr/lib/systemd/system/svoyak-capture.service").chmod(0o600)
    return tree


def test_rewrites_only_what_differs_with_the_install_modes(stale_tree, tmp_path):
    image, root = disk_holding(tmp_path, stale_tree)
    result = run("bash", str(SCRIPT), str(image))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("refresh: /") == 2, result.stdout
    assert "2 file(s) rewritten" in result.stdout and "checked clean" in result.stdout
    for destination, (source, mode) in installed_from_systemd().items():
        assert on_disk(root, destination) == (source.read_text(encoding="utf-8"), f"{mode:04o}"), destination
    assert on_disk(root, "/etc/fstab")[0] == "LABEL=svoyak-root / ext4 defaults 0 1\n"
    assert run("e2fsck", "-fn", root).returncode == 0
    again = run("bash", str(SCRIPT), str(image))
    assert again.returncode == 0 and "already holds" in again.stdout, again.stdout + again.stderr


def test_a_file_the_disk_lacks_is_refused_untouched(stale_tree, tmp_path):
    (stale_tree / "usr/local/lib/svoyak/gpio-bench").unlink()
    image, root = disk_holding(tmp_path, stale_tree)
    result = run("bash", str(SCRIPT), str(image))
    assert result.returncode == 1
    assert "/usr/local/lib/svoyak/gpio-bench is not on the disk" in result.stderr and "./dev image" in result.stderr
    assert on_disk(root, "/usr/local/lib/svoyak/boot-report")[0] == "#!/bin/sh\necho old report\n"
