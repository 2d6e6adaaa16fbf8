#!/bin/bash -e
# pi-gen sub-stage: install the svoyak box with the steps the Debian builder uses too (image/install-box.sh),
# from the bundle that image/pi-gen/prepare.sh put in files/bundle (project wheel, pinned wheels, units).
bundle="files/bundle"
if [ ! -f "${bundle}/install-box.sh" ]; then
    echo "stage-svoyak: ${bundle} is missing: run image/pi-gen/prepare.sh in the svoyak repo first" >&2
    exit 1
fi
rm -rf "${ROOTFS_DIR}/tmp/svoyak-install"
cp -a "${bundle}" "${ROOTFS_DIR}/tmp/svoyak-install"
on_chroot <<'CHROOT'
bash /tmp/svoyak-install/install-box.sh all
rm -rf /tmp/svoyak-install
CHROOT

# The HDMI console never blanks (the kiosk's compositor does not blank either). cmdline.txt is one line.
cmdline="${ROOTFS_DIR}/boot/firmware/cmdline.txt"
[ -f "${cmdline}" ] || cmdline="${ROOTFS_DIR}/boot/cmdline.txt"
grep -q 'consoleblank=0' "${cmdline}" || sed -i '1 s/$/ consoleblank=0/' "${cmdline}"
