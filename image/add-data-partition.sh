#!/bin/bash
# Give a built image a data partition for the event store: append an ext4 partition LABEL=svoyak-data
# to the image and mount it on /var/lib/svoyak through the root file system's /etc/fstab.
#
#   bash image/add-data-partition.sh IMAGE [SIZE_MB]      (default 512 MB; no root needed, no loop devices)
#
# For pi-gen images (pi-gen lays out boot + root only). With the data on its own partition, Raspberry Pi
# OS's overlay root (overlayroot=tmpfs:recurse=0) keeps the root read-only and the data writable
# (docs/appliance.md, "Data safety"). The root partition is the last Linux (type 83) partition before the
# new one; its /etc/fstab is edited in place with debugfs.
set -euo pipefail
img=${1:?usage: add-data-partition.sh IMAGE [SIZE_MB]}
size_mb=${2:-512}
for tool in sfdisk mkfs.ext4 debugfs e2fsck python3; do
    command -v "$tool" >/dev/null || { echo "add-data-partition: missing $tool (fdisk, e2fsprogs, python3)" >&2; exit 2; }
done

# The partitions, in 512-byte sectors: "start size type" per line.
parts() { sfdisk -J "$img" | python3 -c '
import json, sys
for part in json.load(sys.stdin)["partitiontable"]["partitions"]:
    print(part["start"], part["size"], part["type"])'; }
if [ "$(parts | wc -l)" -ge 4 ]; then
    echo "add-data-partition: $img has 4 partitions already (MBR): nothing done" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The root: the first Linux partition whose file system holds /etc/fstab.
root_start=""
while read -r start size type; do
    [ "$type" = 83 ] || continue
    dd if="$img" of="$work/root.ext4" bs=4M iflag=skip_bytes,count_bytes skip=$(( start * 512 )) \
        count=$(( size * 512 )) status=none
    if debugfs -R "dump /etc/fstab $work/fstab" "$work/root.ext4" 2>/dev/null && [ -s "$work/fstab" ]; then
        root_start=$start
        break
    fi
done < <(parts)
[ -n "$root_start" ] || { echo "add-data-partition: no root file system (with /etc/fstab) in $img" >&2; exit 1; }

# 1. the root's fstab gets the data mount (debugfs edits the ext4 file system inside the image file)
if grep -q '/var/lib/svoyak' "$work/fstab"; then
    echo "add-data-partition: $img mounts /var/lib/svoyak already: nothing done" >&2
    exit 1
fi
cat >> "$work/fstab" <<'EOF'
# svoyak event store: its own partition, writable under a read-only (overlay) root. ext4 with barriers on
# (the default): SQLite's fsync (WAL, synchronous=FULL) reaches the card. nofail with a slow card's device
# timeout: never emergency mode on a box without a keyboard; the web service's data check (data_mount in
# /etc/svoyak/svoyak.toml) shows what is wrong instead and starts no battle it could not store.
LABEL=svoyak-data  /var/lib/svoyak  ext4  defaults,noatime,data=ordered,nofail,x-systemd.device-timeout=600s  0  2
EOF
# the box's settings file: the data directory must be on this partition (appliance/service/storage.py)
debugfs -R "dump /etc/svoyak/svoyak.toml $work/svoyak.toml" "$work/root.ext4" >/dev/null 2>&1 || true
[ -s "$work/svoyak.toml" ] || echo "# The box's settings (appliance/config.py; \`svoyak config\` lists them)." > "$work/svoyak.toml"
grep -q '^data_mount' "$work/svoyak.toml" || echo 'data_mount = "/var/lib/svoyak"' >> "$work/svoyak.toml"
# debugfs gives new inodes the caller's ids: set root's, and the modes, explicitly.
cat > "$work/edit" <<EOF
rm /etc/fstab
write $work/fstab /etc/fstab
sif /etc/fstab uid 0
sif /etc/fstab gid 0
sif /etc/fstab mode 0100644
mkdir /etc/svoyak
sif /etc/svoyak uid 0
sif /etc/svoyak gid 0
sif /etc/svoyak mode 040755
rm /etc/svoyak/svoyak.toml
write $work/svoyak.toml /etc/svoyak/svoyak.toml
sif /etc/svoyak/svoyak.toml uid 0
sif /etc/svoyak/svoyak.toml gid 0
sif /etc/svoyak/svoyak.toml mode 0100644
mkdir /var
mkdir /var/lib
mkdir /var/lib/svoyak
sif /var/lib/svoyak uid 0
sif /var/lib/svoyak gid 0
sif /var/lib/svoyak mode 040755
EOF
debugfs -w -f "$work/edit" "$work/root.ext4" >/dev/null 2>&1
e2fsck -fy "$work/root.ext4" >/dev/null 2>&1 || [ $? -le 1 ]   # 1 = "fixed", e.g. the directory counts
dd if="$work/root.ext4" of="$img" bs=4M oflag=seek_bytes seek=$(( root_start * 512 )) conv=notrunc status=none

# 2. the partition: appended after the last one, 1 MiB aligned
end=$(( $(parts | awk '{ print $1 + $2 }' | sort -n | tail -1) ))
start=$(( (end + 2047) / 2048 * 2048 ))
sectors=$(( size_mb * 2048 ))
truncate -s $(( (start + sectors) * 512 )) "$img"
echo "start=$start, size=$sectors, type=83" | sfdisk -q --append "$img"
mkfs.ext4 -q -L svoyak-data "$work/data.ext4" "${size_mb}M"
dd if="$work/data.ext4" of="$img" bs=4M oflag=seek_bytes seek=$(( start * 512 )) conv=notrunc,sparse status=none
echo "add-data-partition: $img: data partition LABEL=svoyak-data, ${size_mb} MB at sector $start; /etc/fstab mounts it on /var/lib/svoyak"
