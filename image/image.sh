#!/bin/bash
# Build the box's disk image on a plain Debian machine, from Debian's arm64 packages (mmdebstrap +
# qemu-user-static), with the same install steps as the pi-gen stage (image/install-box.sh).
#
#   ./dev image            (as root; 10-15 min the first time, a few minutes when the base is cached)
#
# Output in image/out/ (SVOYAK_IMAGE_OUT):
#   svoyak-VERSION-arm64.img  raw disk that boots a Raspberry Pi 3/4 and QEMU's virt board: partition 1 boot
#                      (FAT32, LABEL=SVOYAK-BOOT, /boot/firmware: Raspberry Pi firmware, kernel, initrd, device
#                      trees, config.txt, cmdline.txt), 2 root (ext4, LABEL=svoyak-root), 3 data (ext4,
#                      LABEL=svoyak-data, mounted on /var/lib/svoyak: the event store survives a read-only root)
#   svoyak-VERSION-arm64.img.xz, .img.xz.sha256, .img.bmap   what people flash (image/release.sh)
#   svoyak-arm64.img   a link to the raw disk, the name ./dev image-test boots
#   vmlinuz, initrd.img, cmdline.txt, bcm2837-rpi-3-b.dtb   for qemu-system-aarch64 (virt and raspi3b)
# Steps: 1. base root filesystem (Debian + the box's packages), cached in image/out/base until install-box.sh's
# package list or this script's base options change; 2. bundle (the project wheel built from this worktree and
# its pinned dependencies as aarch64 wheels); 3. install-box.sh box in a copy of the base, then the initrd and
# the Pi's boot files; 4. disk image and release files.
# mmdebstrap hooks are shell snippets it runs with the root directory as "$1": single quotes on purpose.
# shellcheck disable=SC2016
set -euo pipefail
# The whole script is one block: bash reads it before running it, so editing the file mid-build is safe.
{
cd "$(dirname "$0")/.."
OUT=${SVOYAK_IMAGE_OUT:-image/out}
MIRROR=${SVOYAK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${SVOYAK_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
SUITE=trixie
DATA_MB=${SVOYAK_IMAGE_DATA_MB:-256}
BOOT_MB=256
# The Raspberry Pi device trees whose SD card the initrd must mount (checked by image/dt_modules.py).
PI_DTBS=(broadcom/bcm2837-rpi-3-b.dtb broadcom/bcm2837-rpi-3-b-plus.dtb broadcom/bcm2837-rpi-3-a-plus.dtb
         broadcom/bcm2837-rpi-zero-2-w.dtb broadcom/bcm2711-rpi-4-b.dtb broadcom/bcm2711-rpi-400.dtb)
# The Debian system under the box: systemd, the arm64 kernel (it boots QEMU's virt board and a Pi 3/4), the
# Raspberry Pi boot firmware (non-free-firmware: it fills /boot/firmware, the FAT partition a Pi boots from),
# the Pi's Wi-Fi firmware for the hotspot, and nothing else.
BASE_INCLUDE=systemd-sysv,udev,kmod,linux-image-arm64,initramfs-tools,zstd,iproute2,netbase,e2fsprogs,procps,raspi-firmware,firmware-brcm80211,dosfstools
COMPONENTS="main non-free-firmware"

start=$(date +%s)
step() { echo "image: [$(( $(date +%s) - start ))s] $*"; }
die() { echo "image: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap root mode, chroot, loop-free mkfs)"
for tool in mmdebstrap sfdisk mkfs.ext4 arch-test mkfs.vfat mcopy bmaptool xz; do
    command -v "$tool" >/dev/null || die "missing $tool: apt-get install mmdebstrap fdisk e2fsprogs arch-test qemu-user-static binfmt-support dosfstools mtools bmap-tools xz-utils"
done
# arm64 binaries run through qemu-user-static's binfmt handler (image/README.md: "binfmt").
if ! arch-test arm64 >/dev/null 2>&1; then
    mountpoint -q /proc/sys/fs/binfmt_misc || mount binfmt_misc -t binfmt_misc /proc/sys/fs/binfmt_misc
    update-binfmts --enable qemu-aarch64 || true
    arch-test arm64 >/dev/null || die "this machine cannot run arm64 binaries: install qemu-user-static binfmt-support"
fi
mkdir -p "$OUT"

# --- 1. base root filesystem, cached by the hash of what goes into it
key=$( { sed -n '/^install_packages()/,/^}/p' image/install-box.sh; echo "$BASE_INCLUDE $SUITE $MIRROR $COMPONENTS";
         sed -n '/^build_base()/,/^}/p' "$0"; } | sha256sum | cut -c1-16)
build_base() {
    rm -rf "$OUT/base" "$OUT/base.tmp"
    # initramfs-tools' MODULES=most runs one process per module under qemu-user (~9 min per initrd, built 3
    # times): list only what QEMU's virt board needs to mount the root (shared/notes/image-boot.md).
    mmdebstrap --arch=arm64 --variant=minbase --mode=root \
        --include="$BASE_INCLUDE" \
        --dpkgopt='force-unsafe-io' \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --aptopt='Acquire::Languages "none"' \
        --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d"; echo MODULES=list > "$1/etc/initramfs-tools/conf.d/svoyak"' \
        --essential-hook='cp image/initramfs-modules "$1/etc/initramfs-tools/modules"' \
        --customize-hook='mkdir -p "$1/tmp/svoyak-install" && cp image/install-box.sh "$1/tmp/svoyak-install/"' \
        --customize-hook='chroot "$1" bash /tmp/svoyak-install/install-box.sh packages' \
        --customize-hook='rm -rf "$1/tmp/svoyak-install"' \
        "$SUITE" "$OUT/base.tmp" \
        "deb $MIRROR $SUITE $COMPONENTS" "deb $MIRROR $SUITE-updates $COMPONENTS" "deb $SECURITY $SUITE-security $COMPONENTS"
    mv "$OUT/base.tmp" "$OUT/base"
    echo "$key" > "$OUT/base.key"
}
if [ -d "$OUT/base" ] && [ "$(cat "$OUT/base.key" 2>/dev/null)" = "$key" ]; then
    step "base root filesystem: cached ($OUT/base, key $key)"
else
    step "base root filesystem: building with mmdebstrap (key $key)"
    build_base
    step "base root filesystem: done"
fi

# --- 2. bundle: install-box.sh, systemd/, requirements.lock, the project wheel and its aarch64 wheels
step "bundle: building the svoyak wheel and fetching pinned aarch64 wheels"
SVOYAK_WHEEL_CACHE="$OUT/wheel-cache" bash image/bundle.sh "$OUT/bundle"

# --- 3. the box, installed into a copy of the base
step "rootfs: copying the base and running install-box.sh box"
rootfs="$OUT/rootfs"
cleanup() {
    for mnt in sys proc dev/pts dev; do if mountpoint -q "$rootfs/$mnt"; then umount "$rootfs/$mnt"; fi; done
    return 0
}
# A build killed mid-chroot leaves the host's /dev bound in the old root: unmount first, and never let rm
# cross into another file system.
cleanup
rm -rf --one-file-system "$rootfs"
cp -a "$OUT/base" "$rootfs"
cp -a "$OUT/bundle" "$rootfs/tmp/svoyak-install"
trap cleanup EXIT
trap 'exit 130' INT TERM
mount --bind /dev "$rootfs/dev"; mount --bind /dev/pts "$rootfs/dev/pts"
mount -t proc proc "$rootfs/proc"; mount -t sysfs sys "$rootfs/sys"
# A clean environment: this machine's PIP_* and locale settings have no business in the image.
chroot "$rootfs" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    bash /tmp/svoyak-install/install-box.sh box
cleanup
# Keep wheels compiled in the target (lgpio) for the next build.
mkdir -p "$OUT/wheel-cache"
find "$rootfs/tmp/svoyak-install/wheels" -name '*aarch64*.whl' -exec cp {} "$OUT/wheel-cache/" \;
rm -rf "$rootfs/tmp/svoyak-install"

# Image-specific system settings (a Pi image gets these from pi-gen).
echo svoyak > "$rootfs/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tsvoyak\n' > "$rootfs/etc/hosts"
# Never emergency mode on a box without a keyboard: every mount but the root is "nofail", so a card whose boot
# or data partition is missing, damaged or slow to appear still boots; each waits for its device up to
# DEVICE_TIMEOUT (a slow card, or QEMU's emulated SD under load, names partitions in minutes, not systemd's
# 90 s). The services only Want= the data mount: without it the web service serves the fault page
# (appliance/service/storage.py, setting data_mount) and starts no battle it could not store. ext4
# data=ordered with barriers on (the defaults): SQLite's fsync in WAL + synchronous=FULL reaches the card.
# noatime only spares the card. The root and the data partition are checked before they are mounted on every
# boot (pass 1 and 2): the root by e2fsck in the initrd (FSTYPE=ext4 below), the data by systemd-fsck, both
# with fsck.repair=yes (the card's cmdline.txt): a power cut costs a journal replay. The FAT boot partition is
# where raspi-firmware's kernel hooks put the kernel, initrd and config.txt on every kernel upgrade; the box
# runs without it (the firmware reads it at power-on; first boot reads svoyak-settings.txt from it).
DEVICE_TIMEOUT=600s
cat > "$rootfs/etc/fstab" <<EOF
LABEL=svoyak-root  /                ext4  defaults,noatime,errors=remount-ro,x-systemd.device-timeout=$DEVICE_TIMEOUT  0  1
LABEL=SVOYAK-BOOT  /boot/firmware   vfat  defaults,noatime,umask=0022,nofail,x-systemd.device-timeout=$DEVICE_TIMEOUT  0  2
LABEL=svoyak-data  /var/lib/svoyak  ext4  defaults,noatime,data=ordered,barrier=1,nofail,x-systemd.device-timeout=$DEVICE_TIMEOUT  0  2
EOF
# The web service and first boot check that the data directory is on its partition (setting data_mount).
install -d -m 0755 "$rootfs/etc/svoyak"
cat > "$rootfs/etc/svoyak/svoyak.toml" <<'EOF'
# The box's settings (appliance/config.py; `svoyak config` lists them). First boot adds what the card's
# svoyak-settings.txt sets (Wi-Fi country, hotspot name and password, box name, hub).
data_mount = "/var/lib/svoyak"
EOF
: > "$rootfs/etc/machine-id"   # made on first boot: every box its own
rm -f "$rootfs/var/lib/dbus/machine-id"
install -d -m 0755 "$rootfs/var/lib/svoyak"

# --- 3b. what a Pi boots: raspi-firmware's hook (/etc/kernel/postinst.d/z50-raspi-firmware) fills
# /boot/firmware with the firmware, the kernel, the initrd, every bcm*.dtb of the kernel package, config.txt
# (arm_64bit=1, upstream_kernel=1: the firmware loads the kernel's own device trees) and cmdline.txt from
# /etc/default/raspi-firmware. The initrd is rebuilt with image/initramfs-modules (MODULES=list), checked
# against the Pi device trees first.
step "boot files: initrd with image/initramfs-modules, raspi-firmware's config.txt and cmdline.txt"
kver=$(find "$rootfs/boot" -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sort -V | tail -1)
kver=${kver#vmlinuz-}
python3 image/dt_modules.py --root "$rootfs" --kernel "$kver" --modules image/initramfs-modules \
    --record image/sd-root-drivers.txt "${PI_DTBS[@]}" >/dev/null
cp image/initramfs-modules "$rootfs/etc/initramfs-tools/modules"
# The card's kernel command line (raspi-firmware writes it again on every kernel upgrade, from these files):
# the HDMI screen is the console a person reads. The LAST console= is /dev/console: systemd's messages, the
# emergency shell and what first boot prints (the network, its password, the PIN) go to tty1, the HDMI screen;
# the kernel's messages go to the serial header (GPIO14/15, the mini UART ttyS1) as well. raspi-firmware writes
# "rw fsck.repair=yes": the root is checked by e2fsck in the initrd before it is mounted (-y: no one is there to
# answer), see FSTYPE below and image/README.md ("A power cut").
cat >> "$rootfs/etc/default/raspi-firmware" <<'EOF'

# svoyak (image/image.sh): the root by label; the kernel's messages on the serial header too, the HDMI
# screen (tty1, last) is /dev/console.
ROOTPART=LABEL=svoyak-root
CONSOLES="ttyS1,115200 tty1"
EOF
echo "consoleblank=0" > "$rootfs/etc/default/raspi-extra-cmdline"
# fsck in the initrd: its hook names the root's type from the device, which the chroot does not have
# ("Couldn't identify type of root file system"): name it, so fsck, logsave and e2fsck go in.
echo "FSTYPE=ext4" > "$rootfs/etc/initramfs-tools/conf.d/svoyak-fsck"
mount --bind /dev "$rootfs/dev"; mount -t proc proc "$rootfs/proc"; mount -t sysfs sys "$rootfs/sys"
chroot "$rootfs" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    update-initramfs -u -k "$kver" >/dev/null
initrd_list=$(chroot "$rootfs" lsinitramfs "/boot/initrd.img-$kver")
cleanup
read -ra needed < <(sed -n 's/^needs //p' image/sd-root-drivers.txt)
for module in "${needed[@]}"; do
    grep -q "/${module//_/[-_]}\.ko" <<<"$initrd_list" || die "the initrd lacks $module (image/sd-root-drivers.txt)"
done
for tool in fsck logsave fsck.ext4; do
    grep -qE "(^|/)s?bin/$tool\$" <<<"$initrd_list" || die "the initrd lacks $tool: the root would never be checked"
done
for file in config.txt cmdline.txt "vmlinuz-$kver" "initrd.img-$kver" bootcode.bin start.elf start4.elf "${PI_DTBS[@]#broadcom/}"; do
    [ -f "$rootfs/boot/firmware/$file" ] || die "raspi-firmware did not write /boot/firmware/$file"
done
cmp -s "$rootfs/boot/initrd.img-$kver" "$rootfs/boot/firmware/initrd.img-$kver" || die "/boot/firmware has an old initrd"
python3 image/cardboot.py check-card "$rootfs/boot/firmware" || die "the card's cmdline.txt or config.txt is not what the box needs"
# What a person edits on any computer before the first boot (appliance/service/bootsettings.py).
cp image/svoyak-settings.txt "$rootfs/boot/firmware/svoyak-settings.txt"

# --- 4. disk image: a FAT boot partition and two ext4 file systems made from directories (no loop devices),
# then a partition table
step "disk: making the file systems"
cp "$rootfs/boot/vmlinuz-$kver" "$OUT/vmlinuz"
cp "$rootfs/boot/initrd.img-$kver" "$OUT/initrd.img"
cp "$rootfs/usr/lib/linux-image-$kver/broadcom/bcm2837-rpi-3-b.dtb" "$OUT/"
# The tests boot what the card holds (image/cardboot.py reads the FAT partition); these copies are for a
# person reading them.
cp "$rootfs/boot/firmware/cmdline.txt" "$rootfs/boot/firmware/config.txt" "$OUT/"
rm -f "$OUT/boot.vfat" "$OUT/root.ext4" "$OUT/data.ext4"
mkfs.vfat -F 32 -n SVOYAK-BOOT -C "$OUT/boot.vfat" $(( BOOT_MB * 1024 )) >/dev/null
mcopy -s -p -i "$OUT/boot.vfat" "$rootfs"/boot/firmware/* ::/
find "$rootfs/boot/firmware" -mindepth 1 -delete   # the root holds only the mount point
root_mb=$(( $(du -sm "$rootfs" | cut -f1) * 13 / 10 + 300 ))
datadir=$(mktemp -d)
mkfs.ext4 -q -L svoyak-root -d "$rootfs" "$OUT/root.ext4" "${root_mb}M"
mkfs.ext4 -q -L svoyak-data -d "$datadir" "$OUT/data.ext4" "${DATA_MB}M"
rmdir "$datadir"
version=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
img="$OUT/svoyak-$version-arm64.img"
rm -f "$img" "$OUT/svoyak-arm64.img"
truncate -s $(( 4 + BOOT_MB + root_mb + DATA_MB + 1 ))M "$img"
# The Pi's boot ROM reads the first partition: FAT32 (type c), flagged bootable.
sfdisk -q "$img" <<EOF
label: dos
start=4MiB, size=${BOOT_MB}MiB, type=c, bootable
size=${root_mb}MiB, type=83
size=${DATA_MB}MiB, type=83
EOF
dd if="$OUT/boot.vfat" of="$img" bs=1M seek=4 conv=notrunc,sparse status=none
dd if="$OUT/root.ext4" of="$img" bs=1M seek=$(( 4 + BOOT_MB )) conv=notrunc,sparse status=none
dd if="$OUT/data.ext4" of="$img" bs=1M seek=$(( 4 + BOOT_MB + root_mb )) conv=notrunc,sparse status=none
rm -f "$OUT/boot.vfat" "$OUT/root.ext4" "$OUT/data.ext4"
ln -s "$(basename "$img")" "$OUT/svoyak-arm64.img"   # the name ./dev image-test boots
echo "$kver" > "$OUT/kernel-version"
step "disk: $img ($(du -h --apparent-size "$img" | cut -f1), $(du -h "$img" | cut -f1) on disk)"
if [ "${SVOYAK_IMAGE_RELEASE:-yes}" = yes ]; then
    step "release: xz, sha256, bmap"
    bash image/release.sh "$img"
fi
step "done: $img, $OUT/vmlinuz, $OUT/initrd.img (kernel $kver)"
exit 0
}
