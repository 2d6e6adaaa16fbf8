"""The initrd's module list against the device trees (image/dt_modules.py), and the release files.

The real check runs in ``./dev image`` against the image's own kernel and writes image/sd-root-drivers.txt;
here: that record against image/initramfs-modules, and the tool itself on a small device tree of our own.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("dt_modules", ROOT / "image/dt_modules.py")
dt_modules = importlib.util.module_from_spec(spec)
sys.modules["dt_modules"] = dt_modules  # dataclasses look their module up
spec.loader.exec_module(dt_modules)

RECORD = ROOT / "image/sd-root-drivers.txt"


def test_the_initrd_lists_every_module_the_pi_device_trees_need_for_the_sd_card():
    needs = [line for line in RECORD.read_text().splitlines() if line.startswith("needs ")]
    assert len(needs) == 1
    needed = set(needs[0].split()[1:])
    listed = dt_modules.read_module_list(ROOT / "image/initramfs-modules")
    assert {"ext4", "sdhci_iproc", "bcm2835"} <= needed
    assert needed <= listed, f"image/initramfs-modules lacks {sorted(needed - listed)}"
    assert {"virtio_blk", "virtio_pci"} <= listed  # QEMU's virt board still boots the same disk
    # every Pi board of image.sh's list is in the record, each with its SD host
    hosts = {line.split()[1] for line in RECORD.read_text().splitlines() if line.startswith("dtb ")}
    assert {"broadcom/bcm2837-rpi-3-b.dtb", "broadcom/bcm2711-rpi-4-b.dtb"} <= hosts


DTS = """/dts-v1/;
/ {
    #address-cells = <1>; #size-cells = <1>;
    model = "Test Board";
    interrupt-parent = <&intc>;
    intc: interrupt-controller@100 { compatible = "test,early-intc"; reg = <0x100 4>; interrupt-controller;
                                     #interrupt-cells = <1>; };
    fw: firmware { compatible = "test,firmware";
        expgpio: gpio { compatible = "test,fw-gpio"; gpio-controller; #gpio-cells = <2>; }; };
    clk: clock@200 { compatible = "test,clock"; reg = <0x200 4>; #clock-cells = <1>; };
    vcc: regulator-vcc { compatible = "regulator-fixed"; gpio = <&expgpio 6 0>; };
    soc { compatible = "simple-bus"; #address-cells = <1>; #size-cells = <1>; ranges;
        mmc@300 { compatible = "test,sdhci", "generic-sdhci"; reg = <0x300 4>; interrupts = <5>;
                  clocks = <&clk 3>; vmmc-supply = <&vcc>; };
        mmc@400 { compatible = "test,sdhci"; reg = <0x400 4>; status = "disabled"; clocks = <&other>; };
        other: clock@500 { compatible = "test,unused-clock"; reg = <0x500 4>; #clock-cells = <0>; };
    };
};
"""


@pytest.fixture
def fake_root(tmp_path):
    dtc = shutil.which("dtc")
    if dtc is None:
        pytest.fail("dtc is missing: ./dev test installs device-tree-compiler")
    version = "6.12.0-test"
    dtb = tmp_path / f"usr/lib/linux-image-{version}/test/board.dtb"
    dtb.parent.mkdir(parents=True)
    subprocess.run([dtc, "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), "-"], input=DTS, text=True, check=True)
    modules = tmp_path / "lib/modules" / version
    modules.mkdir(parents=True)
    (modules / "modules.alias").write_text(
        "alias of:N*T*Ctest,sdhciC* test_sdhci\nalias of:N*T*Ctest,sdhci test_sdhci\n"
        "alias of:N*T*Ctest,fw-gpio fw_gpio\nalias of:N*T*Ctest,clockC* test_clk\nalias of:N*T*Ctest,clock test_clk\n"
        "alias of:N*T*Ctest,unused-clock unused_clk\nalias pci:v00001AF4d* virtio_pci\n")
    (modules / "modules.dep").write_text(
        "kernel/drivers/mmc/host/test-sdhci.ko: kernel/drivers/mmc/host/sdhci.ko\n"
        "kernel/drivers/gpio/fw-gpio.ko:\nkernel/drivers/clk/test-clk.ko:\nkernel/drivers/clk/unused-clk.ko:\n")
    (modules / "modules.builtin").write_text("kernel/drivers/firmware/test-firmware.ko\n")
    (modules / "modules.builtin.modinfo").write_bytes(
        b"test_firmware.alias=of:N*T*Ctest,firmware\0test_firmware.license=GPL\0")
    (tmp_path / "boot").mkdir()
    # the early interrupt controller and regulator-fixed have no alias: their compatible is in the image
    (tmp_path / "boot" / f"vmlinuz-{version}").write_bytes(
        gzip.compress(b"\0junk\0test,early-intc\0regulator-fixed\0more\0"))
    return tmp_path, version


def test_the_closure_follows_clocks_supplies_gpios_parents_and_interrupts(fake_root, tmp_path):
    root, version = fake_root
    modules_file = tmp_path / "modules"
    modules_file.write_text("# comment\nmmc_block\ntest-sdhci\nfw_gpio  opt=1\n")  # test_clk missing
    record = tmp_path / "record.txt"
    code = dt_modules.main(["--root", str(root), "--kernel", version, "--modules", str(modules_file),
                            "--record", str(record), "--always", "mmc_block", "test/board.dtb"])
    text = record.read_text()
    assert code == 1  # test_clk is needed (the host's clock) and not listed
    assert "needs fw_gpio mmc_block test_clk test_sdhci" in text
    assert "dtb test/board.dtb (Test Board) host /soc/mmc@300" in text
    assert "/soc/mmc@400" not in text and "unused_clk" not in text  # a disabled host pulls in nothing
    rows = {line.split("  <- ")[0].split()[-1]: line for line in text.splitlines() if "<-" in line}
    assert "vmmc-supply of mmc@300" in rows["/regulator-vcc"] and "early built-in" in rows["/regulator-vcc"]
    assert "gpio of regulator-vcc" in rows["/firmware/gpio"]
    assert "built-in" in rows["/firmware"] and "test_firmware" in rows["/firmware"]
    assert "interrupt-parent (inherited)" in rows["/interrupt-controller@100"]
    modules_file.write_text("mmc_block\ntest_sdhci\nfw_gpio\ntest_clk\n")
    assert dt_modules.main(["--root", str(root), "--kernel", version, "--modules", str(modules_file),
                            "--always", "mmc_block", "test/board.dtb"]) == 0


def test_a_file_that_is_no_device_tree_is_one_clear_error():
    with pytest.raises(dt_modules.DeviceTreeError, match="bad magic"):
        dt_modules.parse_dtb(b"\0" * 64)


def test_release_files_are_an_xz_its_sha256_and_a_block_map_that_bmaptool_writes_back(tmp_path):
    for tool in ("bmaptool", "xz", "sha256sum"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: ./dev test installs bmap-tools and xz-utils")
    image = tmp_path / "svoyak-0.0.0-arm64.img"
    with image.open("wb") as file:  # sparse, 8 MiB, two data blocks
        file.truncate(8 << 20)
        file.seek(4096)
        file.write(b"boot sector")
        file.seek(5 << 20)
        file.write(b"data" * 1000)
    subprocess.run(["bash", str(ROOT / "image/release.sh"), str(image)], check=True, capture_output=True)
    xz = image.with_name(image.name + ".xz")
    digest, name = (image.with_name(image.name + ".xz.sha256")).read_text().split()
    assert name == xz.name and digest == hashlib.sha256(xz.read_bytes()).hexdigest()
    bmap = image.with_name(image.name + ".bmap").read_text()
    assert re.search(r"<ImageSize>\s*8388608\s*</ImageSize>", bmap)
    assert re.search(r"<MappedBlocksCount>\s*2\s*</MappedBlocksCount>", bmap)
    copy = tmp_path / "card.img"
    subprocess.run(["bmaptool", "-q", "copy", str(xz), str(copy)], check=True, capture_output=True)
    assert copy.read_bytes() == image.read_bytes()
