"""The whole image: built from Debian's arm64 packages and booted in QEMU with no one touching it.

Slow (first build about 25 min, then about 3; boot about 2 min on 2 cores), root only: run with
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
