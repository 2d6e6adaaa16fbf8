"""The box installs the project from a wheel (image/bundle.sh): every shipped asset must be inside it.

Found in QEMU: the Socket.IO client under ``web/static/vendor/socket.io/`` (not a Python package name) was left out
of the wheel, so every page on the box was blank while the editable install used by the other tests was fine.
The wheel is built from the tracked files only, so a build tree (``image/out``) is never walked.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("web/static/", "web/templates/", "appliance/rules/")


@pytest.mark.slow
def test_the_wheel_carries_every_page_asset_template_and_profile(tmp_path):
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    source = tmp_path / "source"
    for name in tracked:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    # the compiled word catalogues are built, not tracked (./dev compiles them before ./dev image: docs/words.md)
    compiled = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "appliance" / "locale").glob("*/LC_MESSAGES/*.mo"))
    assert {"appliance/locale/ru/LC_MESSAGES/messages.mo", "appliance/locale/en/LC_MESSAGES/messages.mo"} <= set(compiled)
    for name in compiled:
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(source)],
                   check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("svoyak-*.whl"))
    inside = set(zipfile.ZipFile(wheel).namelist())
    wanted = {name for name in tracked if name.startswith(SHIPPED) and not name.endswith(".py")}
    assert "web/static/vendor/socket.io/socket.io.min.js" in wanted
    assert sorted(wanted - inside) == []
    assert sorted(set(compiled) - inside) == []  # the box reads the .mo (appliance/words.py)
