"""The image build's scripts: shellcheck-clean, the pi-gen stage laid out as pi-gen expects, one install path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "image"


def _scripts() -> list[str]:
    found = []
    for folder, subfolders, files in os.walk(IMAGE):
        subfolders[:] = [name for name in subfolders if name not in ("out", "bundle")]  # build outputs
        found += [str((Path(folder) / name).relative_to(ROOT)) for name in files if name.endswith(".sh")]
    return sorted(found)


SCRIPTS = _scripts()
STAGE = IMAGE / "pi-gen/stage-svoyak"


def test_the_scripts_are_found():
    assert {"image/install-box.sh", "image/image.sh", "image/image-test.sh", "image/bundle.sh",
            "image/pi-gen/prepare.sh", "image/pi-gen/stage-svoyak/prerun.sh",
            "image/pi-gen/stage-svoyak/00-svoyak/00-run.sh"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", [*SCRIPTS, "image/pi-gen/config.example", "dev", ".ci/run", "tests/fresh-machine.sh"])
def test_shellcheck_finds_nothing(script):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail("shellcheck is missing: ./dev test installs it")
    result = subprocess.run([shellcheck, "--external-sources", "--severity=style", script], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_pi_gen_stage_is_laid_out_as_pi_gen_runs_it():
    # pi-gen runs <stage>/prerun.sh, then each sub-stage's NN-run.sh if executable; EXPORT_IMAGE exports an image.
    assert os.access(STAGE / "prerun.sh", os.X_OK)
    assert "copy_previous" in (STAGE / "prerun.sh").read_text(encoding="utf-8")
    assert os.access(STAGE / "00-svoyak/00-run.sh", os.X_OK)
    assert 'IMG_SUFFIX="-svoyak"' in (STAGE / "EXPORT_IMAGE").read_text(encoding="utf-8")
    assert "stage-svoyak" in (IMAGE / "pi-gen/config.example").read_text(encoding="utf-8")


def test_both_builders_install_with_the_same_script():
    pi_gen = (STAGE / "00-svoyak/00-run.sh").read_text(encoding="utf-8")
    debian = (IMAGE / "image.sh").read_text(encoding="utf-8")
    assert "install-box.sh all" in pi_gen
    assert "install-box.sh packages" in debian and "install-box.sh box" in debian
    # and the bundle both install from is made by one script
    assert "bundle.sh" in (IMAGE / "pi-gen/prepare.sh").read_text(encoding="utf-8") and "bundle.sh" in debian


def test_install_script_installs_offline_from_the_pinned_bundle():
    script = (IMAGE / "install-box.sh").read_text(encoding="utf-8")
    installs = [match.replace("\\\n", " ") for match in re.findall(r"pip install(?:[^\n\\]|\\\n)*", script)]
    assert installs and all("--no-index" in command for command in installs)  # nothing from the network
    (project,) = [command for command in installs if command.split()[-1] == "svoyak"]
    assert '-c "$BUNDLE/requirements.lock"' in project


def test_dev_installs_the_tools_the_image_tests_use():
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    for package in ("systemd", "network-manager", "dnsmasq-base", "shellcheck", "mmdebstrap", "qemu-user-static",
                    "qemu-system-arm", "arch-test", "fdisk", "e2fsprogs"):
        assert re.search(rf"need_debs (?:[^\n\\]|\\\n)*\b{re.escape(package)}\b", dev), package


def _function(script: Path, name: str) -> str:
    text = script.read_text(encoding="utf-8")
    # a one-line function, or one whose closing brace starts a line
    found = (re.search(rf"^{name}\(\) {{[^\n]*}}$", text, re.MULTILINE)
             or re.search(rf"^{name}\(\) {{.*?^}}$", text, re.MULTILINE | re.DOTALL))
    assert found, f"{name} is not in {script.name}"
    return found.group(0)


def test_the_boot_report_time_is_kept_when_the_pages_answered_before_it(tmp_path):
    # The closing virt boot under load: /host and /board answered at 637 s, the report came at 786 s, and the
    # wait ended on all three at once before it noted the report's time: "boot report never s after QEMU
    # started". image-test's own wait_for_boot, with the pages already answering and the report in the log.
    log = tmp_path / "serial.log"
    log.write_text("[  9.1] svoyak-bootreport: capture=active web=active failed= never= end\n", encoding="utf-8")
    harness = "\n".join([
        "set -euo pipefail",
        "start=$(date +%s); LIMIT=60; STALL=30; AFTER_REPORT=5",
        f"LOG={log}",
        "elapsed() { echo $(( $(date +%s) - start )); }",
        "say() { :; }",
        "http_code() { echo 200; }",
        "sleep 30 & qemu=$!",
        _function(IMAGE / "image-test.sh", "log_size"),
        _function(IMAGE / "image-test.sh", "wait_for_boot"),
        "wait_for_boot",
        "kill $qemu; wait $qemu || true",
        'echo "report_at=$report_at booted_at=$booted_at host=$host board=$board"',
    ])
    result = subprocess.run(["bash", "-c", harness], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    figures = dict(pair.split("=", 1) for pair in result.stdout.split())
    assert figures["host"] and figures["board"]
    assert figures["booted_at"].isdigit() and figures["report_at"].isdigit(), result.stdout
