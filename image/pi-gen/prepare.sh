#!/bin/bash
# Put the install bundle into the pi-gen stage and print how to build. Run in the svoyak repo:
#   bash image/pi-gen/prepare.sh [PI_GEN_DIR]
# With PI_GEN_DIR (a clone of https://github.com/RPi-Distro/pi-gen, arm64 branch for 64-bit) it also copies
# the stage and an example config there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stage="$here/stage-svoyak"
bash "$here/../bundle.sh" "$stage/00-svoyak/files/bundle"
chmod +x "$stage/prerun.sh" "$stage/00-svoyak/00-run.sh"
if [ $# -ge 1 ]; then
    pigen=$1
    rm -rf "${pigen:?}/stage-svoyak"
    cp -a "$stage" "$pigen/stage-svoyak"
    [ -f "$pigen/config" ] || cp "$here/config.example" "$pigen/config"
    echo "prepare: stage copied to $pigen/stage-svoyak; build with: cd $pigen && sudo ./build.sh"
else
    echo "prepare: bundle in $stage/00-svoyak/files/bundle; copy $stage into pi-gen (see image/README.md)"
fi
