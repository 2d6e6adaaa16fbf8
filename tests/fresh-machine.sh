#!/bin/bash
# The README's test command on a fresh Debian 12: a minimal root made by mmdebstrap (no Chromium, no systemd
# tools, no sfdisk, no git), a clone of this repository's HEAD put into it, and `./dev test` run inside as root.
# What the tests need and ./dev does not install fails here, as it would on a new machine.
#
#   ./dev fresh-check [pytest arguments]     (as root; about 10 min on a 2-core machine)
#
# The root reaches the package registries the way this machine does: its apt sources and settings, and its CA
# bundle for pip, are copied in. SVOYAK_FRESH_KEEP=1 keeps the root (its path is printed) for a look inside.
# mmdebstrap hooks are shell snippets it runs with the root directory as "$1": single quotes on purpose.
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "fresh-check: run as root (mmdebstrap root mode, chroot, mounts)" >&2; exit 2; }
SUITE=bookworm
root=$(mktemp -d /var/tmp/svoyak-fresh.XXXXXX)
start=$(date +%s)
step() { echo "fresh-check: [$(( $(date +%s) - start ))s] $*"; }
# shellcheck disable=SC2317  # run by the trap
cleanup() {
    if [ -n "${SVOYAK_FRESH_KEEP:-}" ]; then echo "fresh-check: root kept in $root"; else rm -rf "$root"; fi
}
trap cleanup EXIT

step "a minimal Debian $SUITE root in $root"
mmdebstrap --variant=minbase --include=ca-certificates --aptopt='Acquire::Languages "none"' \
    --setup-hook='mkdir -p "$1/etc/apt"; cp -r /etc/apt/apt.conf.d "$1/etc/apt/"' \
    "$SUITE" "$root" /etc/apt/sources.list.d/*.sources 2>&1 | tail -3
# pip verifies the registry with this machine's CA bundle (it may hold a certificate the fresh root lacks).
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/host-ca-certificates.crt"
step "the repository's HEAD, cloned into /svoyak"
git clone -q "$PWD" "$root/svoyak"
step "./dev test inside the fresh root"
# In a mount namespace of its own, and with the root a mount point (ip netns does `mount --make-rslave /`, which
# fails on a plain directory): every mount made here or by the tests (ip netns binds /run/netns, remounts /sys)
# dies with the namespace instead of staying busy in this machine's and keeping the root from being removed.
set +e
unshare --mount --propagation private bash -euc '
    root=$1; shift
    mount --bind "$root" "$root"
    mount --bind /dev "$root/dev"; mount --bind /dev/pts "$root/dev/pts"; mount -t tmpfs shm "$root/dev/shm"
    mount -t proc proc "$root/proc"; mount -t sysfs sys "$root/sys"
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 CI=true \
        PIP_CERT=/etc/ssl/certs/host-ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
        bash -c "cd /svoyak && ./dev test \"\$@\"" fresh-check "$@"' fresh-check "$root" "$@"
rc=$?
set -e
step "./dev test exited $rc"
exit $rc
