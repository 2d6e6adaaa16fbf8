#!/bin/bash
# Install the svoyak box into the system this script runs in (a chroot of the image being built, or a running
# Raspberry Pi OS / Debian machine). One script, used by both builders:
#   - pi-gen:     image/pi-gen/stage-svoyak/00-svoyak/00-run.sh runs it with on_chroot;
#   - mmdebstrap: image/image.sh runs it with --chrooted-customize-hook.
#
# Usage (as root, inside the target):  install-box.sh [packages|box|all]      (default: all)
#   packages  the Debian packages the box needs (slow: the Debian builder caches this step)
#   box       the svoyak user, the venv /opt/svoyak with the project wheel and its pinned dependencies,
#             the systemd units, udev rule, tmpfiles, NetworkManager/dnsmasq config; enables the units.
#
# It expects, next to itself (the "bundle" that image/bundle.sh makes):
#   wheels/        svoyak-*.whl and every pinned dependency as aarch64 wheels (installed offline, --no-index)
#   requirements.lock
#   systemd/       a copy of the repo's systemd/ folder
set -euo pipefail

BUNDLE=$(cd "$(dirname "$0")" && pwd)
PREFIX=/opt/svoyak
phase=${1:-all}

log() { echo "install-box: $*"; }

# The Debian packages of the box. Chromium is "chromium" on Debian, "chromium-browser" on older Raspberry Pi OS.
install_packages() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    local browser=chromium
    if ! apt-cache show --no-all-versions chromium >/dev/null 2>&1; then browser=chromium-browser; fi
    local packages=(
        python3 python3-venv            # the venv /opt/svoyak
        network-manager dnsmasq-base    # the hotspot: NM shared mode runs dnsmasq (DHCP + DNS)
        rfkill iw wireless-regdb        # unblock and inspect the Wi-Fi
        cage xwayland "$browser" fonts-dejavu-core  # the HDMI kiosk (cage refuses to start without Xwayland)
        dbus libpam-systemd curl        # logind seat for cage; curl waits for the scoreboard
        nats-server                     # rooms (docs/rooms.md): run by svoyak-nats.service when hub or station
    )
    log "installing ${packages[*]}"
    apt-get install -y -qq --no-install-recommends "${packages[@]}"
    apt-get clean
}

# Packages on PyPI without a wheel for this machine (lgpio) come as sources in sdists/: compile them here with
# build tools installed for the purpose and removed afterwards.
build_sdists() {
    local sdists=("$BUNDLE"/sdists/*.tar.gz)
    [ -e "${sdists[0]}" ] || return 0
    local tools=(gcc libc6-dev swig python3-dev) missing=() pkg
    for pkg in "${tools[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
    done
    export DEBIAN_FRONTEND=noninteractive
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing build tools for ${sdists[*]##*/}: ${missing[*]}"
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
    local venv
    venv=$(mktemp -d)
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --no-index --find-links "$BUNDLE/build-wheels" -c "$BUNDLE/requirements.lock" setuptools
    # PYPI=1: lgpio's setup.py links its bundled C library statically (no liblgpio package needed).
    PYPI=1 "$venv/bin/python" -m pip wheel -q --no-deps --no-build-isolation --no-index \
        --wheel-dir "$BUNDLE/wheels" "${sdists[@]}"
    rm -rf "$venv"
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get purge -y -qq --autoremove "${missing[@]}"
        apt-get clean
    fi
}

install_box() {
    # Users: systemd-sysusers reads the same file on every boot (and here, offline, for the image).
    install -D -m 0644 "$BUNDLE/systemd/svoyak.sysusers" /usr/lib/sysusers.d/svoyak.conf
    systemd-sysusers /usr/lib/sysusers.d/svoyak.conf
    install -D -m 0644 "$BUNDLE/systemd/svoyak.tmpfiles" /usr/lib/tmpfiles.d/svoyak.conf
    install -D -m 0644 "$BUNDLE/systemd/60-svoyak-gpio.rules" /etc/udev/rules.d/60-svoyak-gpio.rules
    install -D -m 0644 "$BUNDLE/systemd/70-svoyak-kiosk.rules" /etc/udev/rules.d/70-svoyak-kiosk.rules

    # The project and its pinned dependencies, offline from the bundle's wheels.
    build_sdists
    log "creating $PREFIX"
    rm -rf "$PREFIX"
    python3 -m venv "$PREFIX"
    "$PREFIX/bin/python" -m pip install -q --no-index --find-links "$BUNDLE/wheels" \
        -c "$BUNDLE/requirements.lock" svoyak
    "$PREFIX/bin/svoyak" config >/dev/null  # the installed command runs (and the settings resolve)
    # Every package in the box's venv is one requirements.lock pins, at that version (setuptools too, when a
    # venv brings it: Python 3.11's does, unpinned; 3.13's brings pip only, which Debian's python3 fixes).
    "$PREFIX/bin/python" - "$BUNDLE/requirements.lock" <<'PY'
import importlib.metadata, re, sys
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
pins = {norm(name): version for name, version in
        (line.strip().split("==") for line in open(sys.argv[1]) if "==" in line and not line.startswith("#"))}
found = {norm(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}
bad = sorted(f"{name}=={version}" for name, version in found.items()
             if name not in ("pip", "svoyak") and pins.get(name) != version)
if bad:
    sys.exit(f"install-box: not pinned by requirements.lock: {', '.join(bad)}")
PY
    # The documents the units' Documentation= lines point at.
    if [ -d "$BUNDLE/docs" ]; then
        install -d -m 0755 "$PREFIX/share/doc/svoyak"
        cp -r "$BUNDLE/docs/." "$PREFIX/share/doc/svoyak/"
    fi

    # Units and their drop-ins. /usr/lib is the vendor location; an admin's /etc/systemd/system wins.
    local unit
    for unit in "$BUNDLE"/systemd/*.service; do
        install -m 0644 "$unit" /usr/lib/systemd/system/
    done
    install -D -m 0644 "$BUNDLE/systemd/pam.d/svoyak-kiosk" /etc/pam.d/svoyak-kiosk
    # The boot report (svoyak-bootreport.service: the image tests read it) and the image test's GPIO report
    # (svoyak-gpioreport.service, never enabled).
    install -D -m 0755 "$BUNDLE/systemd/svoyak-bootreport.sh" /usr/local/lib/svoyak/boot-report
    install -D -m 0755 "$BUNDLE/systemd/svoyak-gpioreport.sh" /usr/local/lib/svoyak/gpio-report
    install -D -m 0644 "$BUNDLE/systemd/svoyak-gpiobench.py" /usr/local/lib/svoyak/gpio-bench
    install -d -m 0755 /etc/svoyak /etc/NetworkManager/dnsmasq-shared.d
    # NetworkManager manages every interface (the Wi-Fi for the hotspot, Ethernet for a venue network).
    install -D -m 0644 "$BUNDLE/systemd/NetworkManager/svoyak.conf" /etc/NetworkManager/conf.d/svoyak.conf

    # Browser path: Debian ships /usr/bin/chromium, older Raspberry Pi OS /usr/bin/chromium-browser.
    local browser
    browser=$(command -v chromium || command -v chromium-browser || true)
    if [ -n "$browser" ]; then
        install -d -m 0755 /usr/local/lib/svoyak
        ln -sf "$browser" /usr/local/lib/svoyak/browser
    fi
    # Managed policy (Debian's and Raspberry Pi OS's Chromium read /etc/chromium/policies/managed): no
    # "Translate from Russian?" bubble over the scoreboard; --disable-features=Translate no longer stops it
    # (measured in QEMU with Debian 12's Chromium: the bubble covered the top right corner).
    install -D -m 0644 "$BUNDLE/systemd/chromium/svoyak-kiosk.json" /etc/chromium/policies/managed/svoyak-kiosk.json

    systemctl enable svoyak-capture.service svoyak.service svoyak-firstboot.service \
        svoyak-hotspot.service svoyak-kiosk.service svoyak-nats.service svoyak-spectators.service \
        NetworkManager.service
    systemctl set-default graphical.target
    # The kiosk owns tty1 (svoyak-kiosk.service says why): no getty there, which would stop it on starting.
    # Until the kiosk draws, the screen shows the boot messages and first boot's name, password and PIN.
    systemctl disable getty@tty1.service
    # No login prompt on a serial console: no account logs in there (root is locked; pi-gen's admin logs in over
    # SSH with a key only). systemd-getty-generator would add serial-getty@ for each serial kernel console (ttyS1,
    # the Pi's header; ttyAMA0 on QEMU's virt board), which BindsTo= its device: a device job with systemd's 90 s
    # (DefaultDeviceTimeoutSec, not the mounts' 600 s), queued when the root is switched to and met only when udev's
    # coldplug reaches the tty. On a loaded boot that is later ("Timed out waiting for device dev-ttyAMA0.device",
    # the getty "Dependency failed"), and multi-user.target waits for it all that time (getty.target is ordered
    # before it). The kernel's messages still go to the serial port (console= on the card's command line).
    systemctl mask serial-getty@.service
    # Debian enables its own nats-server.service on install (every interface, no authentication): the rooms
    # run it as svoyak-nats.service with their configuration instead.
    if [ -f /usr/lib/systemd/system/nats-server.service ]; then systemctl disable nats-server.service; fi
    log "installed $("$PREFIX/bin/python" -m pip list --format=freeze 2>/dev/null | grep -i '^svoyak==') in $PREFIX"
}

case "$phase" in
    packages) install_packages ;;
    box) install_box ;;
    all) install_packages; install_box ;;
    *) echo "usage: $0 [packages|box|all]" >&2; exit 2 ;;
esac
