"""image/add-data-partition.sh on a small image laid out like pi-gen's (boot + root): the data partition is
appended, formatted, and the root's fstab mounts it on /var/lib/svoyak; run twice, it changes nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "image/add-data-partition.sh"
MB = 1024 * 1024


def run(*command, **options):
    return subprocess.run(command, capture_output=True, text=True, check=False, **options)


def partitions(image: Path) -> list[dict]:
    return json.loads(run("sfdisk", "-J", str(image)).stdout)["partitiontable"]["partitions"]


def extract(image: Path, partition: dict, destination: Path) -> Path:
    with image.open("rb") as source, destination.open("wb") as target:
        source.seek(partition["start"] * 512)
        target.write(source.read(partition["size"] * 512))
    return destination


@pytest.fixture
def pi_gen_like_image(tmp_path) -> Path:
    for tool in ("sfdisk", "mkfs.ext4", "debugfs"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: ./dev test installs fdisk and e2fsprogs")
    tree = tmp_path / "tree"
    (tree / "etc").mkdir(parents=True)
    (tree / "etc/fstab").write_text("proc /proc proc defaults 0 0\nPARTUUID=abc-02 / ext4 defaults,noatime 0 1\n",
                                    encoding="utf-8")
    root = tmp_path / "root.ext4"
    assert run("mkfs.ext4", "-q", "-d", str(tree), str(root), "16M").returncode == 0
    image = tmp_path / "pi.img"
    image.write_bytes(b"")
    with image.open("r+b") as file:
        file.truncate((4 + 8 + 16) * MB)
        file.seek(12 * MB)
        file.write(root.read_bytes())
    layout = "label: dos\nstart=4MiB, size=8MiB, type=c\nstart=12MiB, size=16MiB, type=83\n"
    assert run("sfdisk", "-q", str(image), input=layout).returncode == 0
    return image


def test_appends_a_formatted_data_partition_mounted_by_fstab(pi_gen_like_image, tmp_path):
    result = run("bash", str(SCRIPT), str(pi_gen_like_image), "16")
    assert result.returncode == 0, result.stderr
    boot, root, data = partitions(pi_gen_like_image)
    assert (data["type"], data["start"] % 2048, data["size"]) == ("83", 0, 16 * 2048)
    assert data["start"] >= root["start"] + root["size"]
    label = run("e2label", str(extract(pi_gen_like_image, data, tmp_path / "data.ext4")))
    assert label.stdout.strip() == "svoyak-data"
    root_fs = extract(pi_gen_like_image, root, tmp_path / "root-after.ext4")
    fstab = run("debugfs", "-R", "cat /etc/fstab", str(root_fs)).stdout
    assert fstab.startswith("proc /proc proc defaults 0 0\n")  # the old lines are kept
    assert ("LABEL=svoyak-data  /var/lib/svoyak  ext4  defaults,noatime,data=ordered,nofail,"
            "x-systemd.device-timeout=600s  0  2") in fstab                  # never emergency mode (issue 23)
    settings = run("debugfs", "-R", "cat /etc/svoyak/svoyak.toml", str(root_fs)).stdout
    assert 'data_mount = "/var/lib/svoyak"' in settings                       # the data check is on
    stat = run("debugfs", "-R", "stat /etc/fstab", str(root_fs)).stdout
    assert "User:     0   Group:     0" in stat and "Mode:  0644" in stat
    assert "Type: directory" in run("debugfs", "-R", "stat /var/lib/svoyak", str(root_fs)).stdout
    assert run("e2fsck", "-fn", str(root_fs)).returncode == 0


def test_a_second_run_changes_nothing(pi_gen_like_image):
    assert run("bash", str(SCRIPT), str(pi_gen_like_image), "16").returncode == 0
    before = pi_gen_like_image.read_bytes()
    again = run("bash", str(SCRIPT), str(pi_gen_like_image), "16")
    assert again.returncode == 1 and "already" in again.stderr
    assert pi_gen_like_image.read_bytes() == before
