"""systemd/svoyak-bootreport.sh, the line the image tests judge a boot by, run against a fake systemctl: a unit
the boot wanted that never started (its job never ran: a dependency failed, a device never came) is named in
``never=``; one skipped by its condition, one that ran and exited, or one the box masked (serial-getty@, wanted by
getty.target for a serial console) is not (issue 23)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "systemd/svoyak-bootreport.sh"

# unit: (LoadState, ActiveState, InactiveExitTimestampMonotonic, ConditionTimestampMonotonic)
UNITS = {
    "graphical.target": ("loaded", "active", "5", "5"),
    "svoyak.service": ("loaded", "active", "40", "40"),
    "svoyak-capture.service": ("loaded", "active", "30", "30"),
    "svoyak-kiosk.service": ("loaded", "inactive", "0", "35"),  # skipped: ConditionPathExistsGlob (no display)
    "systemd-update-utmp-runlevel.service": ("loaded", "inactive", "60", "60"),  # a oneshot that ran and exited
    "var-lib-svoyak.mount": ("loaded", "inactive", "0", "0"),   # its device never came: never started
    "dev-disk-by\\x2dlabel-svoyak\\x2ddata.device": ("loaded", "inactive", "0", "0"),
    # the generator's getty for a serial console, masked by install-box.sh: never started, on purpose
    "serial-getty@ttyAMA0.service": ("masked", "inactive", "0", "0"),
    "display-manager.service": ("not-found", "inactive", "0", "0"),  # graphical.target wants it; none is installed
    "default.target": ("loaded", "inactive", "0", "0"),  # waits for the report itself (systemd.wants=)
}
KEYS = ("LoadState", "ActiveState", "InactiveExitTimestampMonotonic", "ConditionTimestampMonotonic")
FAKE_SYSTEMCTL = r'''#!/bin/sh
case "$1" in
  -q) exit 0 ;;
  is-active) case "$2" in svoyak.service|svoyak-capture.service) echo active ;; *) echo inactive ;; esac ;;
  list-dependencies) printf '%s\n' default.target '  display-manager.service' '  svoyak.service' '  svoyak-capture.service' \
      '  svoyak-kiosk.service' '  systemd-update-utmp-runlevel.service' '  var-lib-svoyak.mount' \
      '    dev-disk-by\x2dlabel-svoyak\x2ddata.device' '  getty.target' '    serial-getty@ttyAMA0.service' ;;
  list-units) echo "svoyak-hotspot.service loaded failed failed svoyak Wi-Fi hotspot" ;;
  show)
    for unit; do :; done
    case "$*" in *NRestarts*) echo 0; exit 0 ;; esac
    # KEY=VALUE lines, in an order of systemctl's own (not the order the -p options came in)
    python3 -c 'import json, sys; u = json.loads(sys.argv[1]).get(sys.argv[2], ["loaded", "active", "1", "1"]); print("\n".join(f"{k}={v}" for k, v in reversed(list(zip(json.loads(sys.argv[3]), u)))))' "$UNITS" "$unit" "$KEYS" ;;
esac
'''


def test_the_report_names_what_never_started_and_what_failed(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text(FAKE_SYSTEMCTL)
    (bin_dir / "findmnt").write_text("#!/bin/sh\necho /dev/vda3 ext4 rw,noatime\n")
    for tool in ("systemctl", "findmnt"):
        (bin_dir / tool).chmod(0o755)
    import json
    out = tmp_path / "kmsg"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "UNITS": json.dumps(UNITS), "KEYS": json.dumps(KEYS),
           "SVOYAK_REPORT_OUT": str(out), "SVOYAK_REPORT_PYTHON": sys.executable, "SVOYAK_REPORT_SETTLE_S": "0"}
    result = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    line = out.read_text()
    assert line.startswith("svoyak-bootreport: capture=active web=active ") and line.strip().endswith(" end")
    assert " data=/dev/vda3,ext4,rw,noatime " in line and " failed=svoyak-hotspot.service, " in line
    never = line.split(" never=")[1].split(" ")[0]
    assert never == "var-lib-svoyak.mount,dev-disk-by\\x2dlabel-svoyak\\x2ddata.device,"
    assert " rootfsck=" in line
