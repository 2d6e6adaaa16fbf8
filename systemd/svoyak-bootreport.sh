#!/bin/sh
# The boot report (svoyak-bootreport.service): one line on the kernel log, so on every console, once the boot
# is done. image/cardboot.py check-log reads it from the serial log of the QEMU tests; on a box,
# `systemctl start svoyak-bootreport` prints it.
#   capture= web= firstboot= kiosk=STATE,RESTARTS hotspot=   the box's units
#   data=SOURCE,FSTYPE,OPTIONS                               what /var/lib/svoyak is mounted from
#   restarts=CAPTURE,WEB  python=VERSION|ERROR                watchdogs kept; the box's own Python imports the project
#   rootfsck=checked|unchecked   the initrd's fsck checked the root before mounting it (its stamp file)
#   failed=UNIT,...    units in the failed state
#   never=UNIT,...     units the boot wanted (default.target, graphical, and below) that never started: their job never
#                      ran (a dependency failed, a device that never came) and no condition skipped them (masked
#                      units are not counted: the box masks them on purpose)
# It waits (up to 8 min: a Pi 3 emulated by QEMU is that slow) for the two services to be active, so a slow
# start is not reported as a failure, then 20 s more: longer than both watchdogs (5 s, 15 s), so "restarts=0"
# shows that they are fed.
set -u
# (tests/systemd/test_bootreport.py runs it with a fake systemctl: where the line goes, the wait, the Python)
out=${SVOYAK_REPORT_OUT:-/dev/kmsg}
python_bin=${SVOYAK_REPORT_PYTHON:-/opt/svoyak/bin/python}
for _ in $(seq 240); do
    systemctl -q is-active svoyak.service && systemctl -q is-active svoyak-capture.service && break
    sleep 2
done
sleep "${SVOYAK_REPORT_SETTLE_S:-20}"
state() { systemctl is-active "$1"; }
restarts() { systemctl show -p NRestarts --value "$1"; }
never=""
prop() { printf '%s\n' "$props" | sed -n "s/^$1=//p"; }   # one KEY=VALUE line of the last `systemctl show`
for unit in $(systemctl list-dependencies --plain --no-legend --no-pager default.target | awk '{ print $NF }'); do
    props=$(systemctl show -p LoadState -p ActiveState -p ConditionTimestampMonotonic -p InactiveExitTimestampMonotonic "$unit")
    # a masked unit is one the box turned off on purpose (install-box.sh: serial-getty@, wanted by getty.target);
    # a not-found one no package ships (graphical.target's display-manager.service); default.target itself waits
    # for this report (systemd.wants= orders a target after what it wants): none of them is a boot that halted
    case "$(prop LoadState)" in masked|not-found) continue ;; esac
    [ "$unit" = default.target ] && continue
    [ "$(prop ActiveState)" = inactive ] && [ "$(prop ConditionTimestampMonotonic)" = 0 ] \
        && [ "$(prop InactiveExitTimestampMonotonic)" = 0 ] && never="$never$unit,"
done
python=$("$python_bin" -I -c "import sys, appliance.config, appliance.rules.battle, gpio.pins, web; appliance.config.load(environ={}, config_path=None); print(sys.version.split()[0])" 2>&1 | tail -1 | tr " " _)
data=$(findmnt -n -r -o SOURCE,FSTYPE,OPTIONS /var/lib/svoyak | tr " " ,)
rootfsck=unchecked; [ -e /run/initramfs/fsck-root ] && rootfsck=checked
failed=$(systemctl list-units --failed --plain --no-legend | cut -d" " -f1 | tr "\n" ,)
echo "svoyak-bootreport: capture=$(state svoyak-capture.service) web=$(state svoyak.service) firstboot=$(state svoyak-firstboot.service) kiosk=$(state svoyak-kiosk.service),$(restarts svoyak-kiosk.service) hotspot=$(state svoyak-hotspot.service) data=$data restarts=$(restarts svoyak-capture.service),$(restarts svoyak.service) python=$python rootfsck=$rootfsck failed=$failed never=$never end" > "$out"
