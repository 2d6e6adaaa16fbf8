#!/bin/bash
# Build the box's disk image on a plain Debian machine, from Debian's arm64 packages (mmdebstrap +
# qemu-user-static), with the same install steps as the pi-gen stage (image/install-box.sh).
#
#   ./dev image            (as root; about 25 min the first time, about 3 min when the base is cached)
#
# Output in image/out/ (SVOYAK_IMAGE_OUT):
#   svoyak-arm64.img   raw disk: partition 1 root (ext4, LABEL=svoyak-root), partition 2 data (ext4,
#                      LABEL=svoyak-data, mounted on /var/lib/svoyak: the event store survives a read-only root)
#   vmlinuz, initrd.img, cmdline.txt   the kernel, initrd and kernel command line for qemu-system-aarch64
# Steps: 1. base root filesystem (Debian + the box's packages), cached in image/out/base until install-box.sh's
# package list or this script's base options change; 2. bundle (the project wheel built from this worktree and
# its pinned dependencies as aarch64 wheels); 3. install-box.sh box in a copy of the base; 4. disk image.
# mmdebstrap hooks are shell snippets it runs with the root directory as "$1": single quotes on purpose.
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${SVOYAK_IMAGE_OUT:-image/out}
MIRROR=${SVOYAK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${SVOYAK_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
SUITE=bookworm
DATA_MB=${SVOYAK_IMAGE_DATA_MB:-256}
# The Debian system under the box: systemd, a kernel for QEMU's virt board, and nothing else.
BASE_INCLUDE=systemd-sysv,udev,kmod,linux-image-arm64,initramfs-tools,zstd,iproute2,netbase,e2fsprogs,procps

start=$(date +%s)
step() { echo "image: [$(( $(date +%s) - start ))s] $*"; }
die() { echo "image: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap root mode, chroot, loop-free mkfs)"
for tool in mmdebstrap sfdisk mkfs.ext4 arch-test; do
    command -v "$tool" >/dev/null || die "missing $tool: apt-get install mmdebstrap fdisk e2fsprogs arch-test qemu-user-static binfmt-support"
done
# arm64 binaries run through qemu-user-static's binfmt handler (image/README.md: "binfmt").
if ! arch-test arm64 >/dev/null 2>&1; then
    mountpoint -q /proc/sys/fs/binfmt_misc || mount binfmt_misc -t binfmt_misc /proc/sys/fs/binfmt_misc
    update-binfmts --enable qemu-aarch64 || true
    arch-test arm64 >/dev/null || die "this machine cannot run arm64 binaries: install qemu-user-static binfmt-support"
fi
mkdir -p "$OUT"

# --- 1. base root filesystem, cached by the hash of what goes into it
key=$( { sed -n '/^install_packages()/,/^}/p' image/install-box.sh; echo "$BASE_INCLUDE $SUITE $MIRROR";
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
        --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d"; echo MODULES=list > "$1/etc/initramfs-tools/conf.d/svoyak"; printf "%s\n" virtio_pci virtio_mmio virtio_blk virtio_net ext4 >> "$1/etc/initramfs-tools/modules"' \
        --customize-hook='mkdir -p "$1/tmp/svoyak-install" && cp image/install-box.sh "$1/tmp/svoyak-install/"' \
        --customize-hook='chroot "$1" bash /tmp/svoyak-install/install-box.sh packages' \
        --customize-hook='rm -rf "$1/tmp/svoyak-install"' \
        "$SUITE" "$OUT/base.tmp" \
        "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY $SUITE-security main"
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
rm -rf "$rootfs"
cp -a "$OUT/base" "$rootfs"
cp -a "$OUT/bundle" "$rootfs/tmp/svoyak-install"
cleanup() {
    for mnt in dev/pts dev proc sys; do mountpoint -q "$rootfs/$mnt" && umount "$rootfs/$mnt"; done; return 0
}
trap cleanup EXIT
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
# The data partition holds /var/lib/svoyak. No "nofail": the services must not start on the root fs instead
# (their RequiresMountsFor= pulls this mount in). ext4 data=ordered with barriers on (the defaults): SQLite's
# fsync in WAL + synchronous=FULL reaches the card. noatime only spares the card.
cat > "$rootfs/etc/fstab" <<'EOF'
LABEL=svoyak-root  /                ext4  defaults,noatime,errors=remount-ro  0  1
LABEL=svoyak-data  /var/lib/svoyak  ext4  defaults,noatime,data=ordered,barrier=1  0  2
EOF
: > "$rootfs/etc/machine-id"   # made on first boot: every box its own
rm -f "$rootfs/var/lib/dbus/machine-id"
install -d -m 0755 "$rootfs/var/lib/svoyak"

# --- 4. disk image: two ext4 file systems made from directories (no loop devices), then a partition table
step "disk: making the file systems"
cp "$rootfs"/boot/vmlinuz-* "$OUT/vmlinuz"
cp "$rootfs"/boot/initrd.img-* "$OUT/initrd.img"
root_mb=$(( $(du -sm "$rootfs" | cut -f1) * 13 / 10 + 300 ))
datadir=$(mktemp -d)
rm -f "$OUT/root.ext4" "$OUT/data.ext4"
mkfs.ext4 -q -L svoyak-root -d "$rootfs" "$OUT/root.ext4" "${root_mb}M"
mkfs.ext4 -q -L svoyak-data -d "$datadir" "$OUT/data.ext4" "${DATA_MB}M"
rmdir "$datadir"
img="$OUT/svoyak-arm64.img"
rm -f "$img"
truncate -s $(( 1 + root_mb + DATA_MB + 1 ))M "$img"
sfdisk -q "$img" <<EOF
label: dos
start=1MiB, size=${root_mb}MiB, type=83
size=${DATA_MB}MiB, type=83
EOF
dd if="$OUT/root.ext4" of="$img" bs=1M seek=1 conv=notrunc,sparse status=none
dd if="$OUT/data.ext4" of="$img" bs=1M seek=$(( 1 + root_mb )) conv=notrunc,sparse status=none
rm -f "$OUT/root.ext4" "$OUT/data.ext4"
echo "root=LABEL=svoyak-root ro console=ttyAMA0 consoleblank=0" > "$OUT/cmdline.txt"
step "done: $img ($(du -h --apparent-size "$img" | cut -f1), $(du -h "$img" | cut -f1) on disk), $OUT/vmlinuz, $OUT/initrd.img"
