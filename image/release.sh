#!/bin/bash
# Make what people flash from a raw disk image: IMAGE.xz, IMAGE.xz.sha256 and IMAGE.bmap (bmap-tools).
#
#   bash image/release.sh image/out/svoyak-0.1.0-arm64.img
#
# The block map is made from the raw image (it lists the blocks that hold data, with their SHA-256), so
# `bmaptool copy IMAGE.xz /dev/sdX` writes only those and checks them; Raspberry Pi Imager ("Use custom")
# writes IMAGE.xz whole. The .sha256 is of the .xz, in sha256sum's format (`sha256sum -c` checks it).
# SVOYAK_XZ_LEVEL (default 1): xz's preset (-1 packs the 1.3 GB of data about 3 times faster than -3, for a
# file about 10 % larger); --threads=0 uses every core.
set -euo pipefail
img=${1:?usage: release.sh IMAGE}
[ -f "$img" ] || { echo "release: $img does not exist" >&2; exit 2; }
for tool in bmaptool xz sha256sum; do
    command -v "$tool" >/dev/null || { echo "release: missing $tool: apt-get install bmap-tools xz-utils" >&2; exit 2; }
done
dir=$(dirname "$img")
name=$(basename "$img")
rm -f "$img.xz" "$img.xz.sha256" "$img.bmap"
bmaptool -q create --output "$img.bmap" "$img"
xz --threads=0 "-${SVOYAK_XZ_LEVEL:-1}" --keep --force "$img"
( cd "$dir" && sha256sum "$name.xz" > "$name.xz.sha256" )
echo "release: $img.xz ($(du -h "$img.xz" | cut -f1)), $img.xz.sha256, $img.bmap"
