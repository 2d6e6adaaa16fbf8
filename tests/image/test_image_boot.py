"""The whole image: built from Debian's arm64 packages and booted in QEMU with no one touching it.

Slow (first build about 25 min, then 4-7; a boot 2-10 min on 2 cores), root only: run with
``pytest -m image tests/image`` or ``./dev image && ./dev image-test [--display]``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.image, pytest.mark.slow]


@pytest.fixture(scope="module")
def built_image():
    if os.geteuid() != 0:
        pytest.fail("the image build needs root (mmdebstrap, chroot)")
    result = subprocess.run(["bash", "image/image.sh"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return ROOT / "image/out/svoyak-arm64.img"


def test_image_boots_and_serves_with_no_one_touching_it(built_image):
    result = subprocess.run(["bash", "image/image-test.sh"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "image-test: all green" in result.stdout


def test_image_shows_the_scoreboard_on_a_display(built_image):
    """With a virtual display (virtio-gpu) the kiosk starts by itself and the screen shows the scoreboard.

    image-test.sh takes screenshots through QEMU's monitor until the screen shows a page (not one colour, not
    a text console), then one more 15 s later, and checks the kiosk was never restarted.
    """
    result = subprocess.run(["bash", "image/image-test.sh", "--display"], cwd=ROOT, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "image-test: ok    kiosk running on the display, never restarted" in result.stdout
    assert "image-test: ok    the display shows a page, not a console" in result.stdout
    assert "image-test: ok    the page is live" in result.stdout
    assert "screenshot 15 s later:" in result.stdout
    assert (ROOT / "image/out/kiosk.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("mode, must_say", [
    ("--raspi", ["the header's chip found by its label: pinctrl-bcm2835",
                 "the kernel runs on the Pi 3's own device tree",
                 "no dependency failed, no unit failed or never started, no emergency mode",
                 "the root was checked by e2fsck in the initrd before it was mounted"]),
    ("--gpio", ["each press's at_ns is its kernel edge", "the LED line (PL061 line 4) went high for each press",
                "every QMP press reached the board as player 1's press"]),
    ("--power-cut", ["the data file system is clean after the power cut",
                     "the root file system is clean after the power cut",
                     "after the cut the initrd checked the root again before mounting it",
                     "the same battle after the reboot, no acknowledged command lost"]),
    ("--raspi-power-cut", ["the root file system is clean after the power cut",
                           "after the cut the initrd checked the root again before mounting it"]),
])
def test_image_boots_as_a_pi_takes_a_real_edge_and_survives_a_power_cut(built_image, mode, must_say):
    """issue 14 (raspi3b, the PL061 edge through lgpio) and issue 10 (the power cut): image-test.sh's modes;
    issue 23: each boots the card's own boot files and fails on emergency mode or a never-started unit."""
    result = subprocess.run(["bash", "image/image-test.sh", mode], cwd=ROOT, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    for words in must_say:
        assert f"image-test: ok    {words}" in result.stdout
