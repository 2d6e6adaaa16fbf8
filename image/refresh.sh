#!/bin/bash
# Bring a built disk's root file system up to this worktree's systemd/ folder without rebuilding the image: every
# file image/install-box.sh installs from systemd/ (the units, the boot report, the GPIO report and bench, the
# udev rules, sysusers, tmpfiles, PAM, NetworkManager and Chromium settings) is compared with the disk's copy and
# rewritten where it differs, with debugfs on partition 2 (no loop device, no mount), then the root is checked
# with e2fsck -fn. Seconds, where ./dev image takes an hour on 2 cores.
#
#   bash image/refresh.sh DISK        (DISK: an svoyak-*.img that ./dev image made)
#
# Only for those files: the Python wheel, the Debian packages, any other step of install-box.sh (a unit it masks
# or enables, a new unit) and the boot partition stay as built: for them, ./dev image. The release files made
# from the disk (.img.xz, .sha256, .bmap) no longer match it afterwards: image/release.sh makes them again.
set -euo pipefail
# SC2016: the sed and grep patterns name install-box.sh's own "$BUNDLE", unexpanded on purpose.
# shellcheck disable=SC2016
{
cd "$(dirname "$0")/.."
die() { echo "refresh: $*" >&2; exit 1; }
disk=${1:-}
[ -f "$disk" ] || die "usage: bash image/refresh.sh DISK (a disk image ./dev image made)"
for tool in debugfs e2fsck sfdisk python3; do command -v "$tool" >/dev/null || die "missing $tool (e2fsprogs, fdisk)"; done
start=$(sfdisk -J "$disk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitiontable"]["partitions"][1]["start"])') \
    || die "$disk has no second partition (the root)"
root="$disk?offset=$(( start * 512 ))"
debugfs -R 'stat /etc/fstab' "$root" >/dev/null 2>&1 || die "partition 2 of $disk is not an ext4 root"

# What install-box.sh installs from systemd/: "SOURCE DESTINATION MODE", one a line.
plan=$(sed -n 's|^ *install -D -m \([0-7]*\) "$BUNDLE/systemd/\([^"]*\)" \([^ ]*\)$|\2 \3 \1|p' image/install-box.sh)
for unit in systemd/*.service; do plan+=$'\n'"${unit#systemd/} /usr/lib/systemd/system/$(basename "$unit") 0644"; done
grep -q 'for unit in "$BUNDLE"/systemd/\*.service' image/install-box.sh \
    || die "install-box.sh no longer installs the units as this script expects: ./dev image"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
commands="$work/commands" changed=0
: > "$commands"
while read -r source destination mode; do
    [ -n "$source" ] || continue
    [ -f "systemd/$source" ] || die "install-box.sh installs systemd/$source, which is not here"
    if ! debugfs -R "stat $destination" "$root" 2>/dev/null | grep -q '^Inode:'; then
        die "$destination is not on the disk (new in install-box.sh, or a new unit that must be enabled): ./dev image"
    fi
    debugfs -R "cat $destination" "$root" > "$work/old" 2>/dev/null
    cmp -s "$work/old" "systemd/$source" && continue
    changed=$((changed + 1))
    staged="$work/$changed"
    install -m "$mode" "systemd/$source" "$staged"   # debugfs write takes the mode from the file it copies
    printf 'rm %s\nwrite %s %s\nsif %s uid 0\nsif %s gid 0\n' \
        "$destination" "$staged" "$destination" "$destination" "$destination" >> "$commands"
    echo "refresh: $destination (systemd/$source, $mode)"
done <<<"$plan"
if [ "$changed" = 0 ]; then echo "refresh: the disk's root already holds this worktree's systemd/ files"; exit 0; fi
debugfs -w -f "$commands" "$root" >"$work/debugfs.log" 2>&1 || { cat "$work/debugfs.log" >&2; die "debugfs failed"; }
if grep -qiE 'error|could not|not found' "$work/debugfs.log"; then cat "$work/debugfs.log" >&2; die "debugfs refused a write"; fi
# every file now as this worktree has it, and the file system sound
while read -r source destination mode; do
    [ -n "$source" ] || continue
    debugfs -R "cat $destination" "$root" 2>/dev/null | cmp -s - "systemd/$source" || die "$destination was not rewritten"
done <<<"$plan"
e2fsck -fn "$root" >"$work/fsck.log" 2>&1 || { cat "$work/fsck.log" >&2; die "the root fails e2fsck -fn after the refresh"; }
echo "refresh: $changed file(s) rewritten on $disk, the root checked clean (e2fsck -fn)"
exit 0
}
