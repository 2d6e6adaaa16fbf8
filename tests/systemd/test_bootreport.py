"""systemd/svoyak-bootreport.sh, the line the image tests judge a boot by, run against a fake systemctl: a unit
the boot wanted that never started (its job never ran: a dependency failed, a device never came) is named in
``never=``; one skipped by its condition, or one that ran and exited, is not (issue 23)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "systemd/svoyak-bootreport.sh"

# unit: (ActiveState, InactiveExitTimestampMonotonic, ConditionTimestampMonotonic), as `systemctl show` prints
UNITS = {
    "graphical.target": ("active", "5", "5"),
    "svoyak.service": ("active", "40", "40"),
    "svoyak-capture.service": ("active", "30", "30"),
    "svoyak-kiosk.service": ("inactive", "0", "35"),         # skipped: ConditionPathExistsGlob (no display)
    "systemd-update-utmp-runlevel.service": ("inactive", "60", "60"),  # a oneshot that ran and exited
    "var-lib-svoyak.mount": ("inactive", "0", "0"),          # its device never came: never started
    "dev-disk-by\\x2dlabel-svoyak\\x2ddata.device": ("inactive", "0", "0"),
}
FAKE_SYSTEMCTL = r'''#!/bin/sh
case "$1" in
  -q) exit 0 ;;
  is-active) case "$2" in svoyak.service|svoyak-capture.service) echo active ;; *) echo inactive ;; esac ;;
  list-dependencies) printf '%s\n' graphical.target '  svoyak.service' '  svoyak-capture.service' \
      '  svoyak-kiosk.service' '  systemd-update-utmp-runlevel.service' '  var-lib-svoyak.mount' \
      '    dev-disk-by\x2dlabel-svoyak\x2ddata.device' ;;
  list-units) echo "svoyak-hotspot.service loaded failed failed svoyak Wi-Fi hotspot" ;;
  show)
    for unit; do :; done
    case "$*" in *NRestarts*) echo 0; exit 0 ;; esac
    python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])[sys.argv[2]]))' "$UNITS" "$unit" ;;
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
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "UNITS": json.dumps(UNITS),
           "SVOYAK_REPORT_OUT": str(out), "SVOYAK_REPORT_PYTHON": sys.executable, "SVOYAK_REPORT_SETTLE_S": "0"}
    result = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    line = out.read_text()
    assert line.startswith("svoyak-bootreport: capture=active web=active ") and line.strip().endswith(" end")
    assert " data=/dev/vda3,ext4,rw,noatime " in line and " failed=svoyak-hotspot.service, " in line
    never = line.split(" never=")[1].split(" ")[0]
    assert never == "var-lib-svoyak.mount,dev-disk-by\\x2dlabel-svoyak\\x2ddata.device,"
    assert " rootfsck=" in line
