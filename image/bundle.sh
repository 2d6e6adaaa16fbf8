#!/bin/bash
# Make the install bundle that image/install-box.sh installs from, offline:
#   DEST/install-box.sh, DEST/requirements.lock, DEST/systemd/, DEST/docs/ (if any),
#   DEST/wheels/  the svoyak wheel built from this worktree + every pinned dependency as aarch64/any wheels,
#   DEST/sdists/  lgpio's source (no aarch64 wheel on PyPI for the pinned version), unless a cached wheel is given,
#   DEST/build-wheels/  setuptools to build it with.
# Both builders use it: image/image.sh (Debian, mmdebstrap) and the pi-gen stage (copy DEST into the stage's
# files/ folder, see image/README.md).
#   bash image/bundle.sh DEST
set -euo pipefail
# pip names every find-links folder of this machine that lacks a package: not news.
exec 2> >(grep --line-buffered -v -e "is ignored: it is neither a file nor a directory" -e "BuildBackendWarning" >&2)
cd "$(dirname "$0")/.."
dest=${1:?usage: bundle.sh DEST}
python=${SVOYAK_BUNDLE_PYTHON:-python3}
box_python=${SVOYAK_BOX_PYTHON:-3.13}

rm -rf "$dest"
mkdir -p "$dest/wheels"
cp image/install-box.sh requirements.lock "$dest/"
cp -r systemd "$dest/systemd"
[ -d docs ] && cp -r docs "$dest/docs"

# The project wheel (pure Python: one wheel serves every architecture).
"$python" -m pip wheel -q --no-deps --wheel-dir "$dest/wheels" .
wheels=("$dest"/wheels/svoyak-*.whl)
wheel=${wheels[0]}

# Its dependencies for the box's Python (Debian 13 trixie / Raspberry Pi OS trixie: CPython 3.13, aarch64;
# SVOYAK_BOX_PYTHON=3.11 for a bookworm-based pi-gen image),
# pinned by requirements.lock. pip evaluates environment markers for the machine it runs on, not for
# --platform, so the aarch64-only lgpio is skipped here and fetched below.
"$python" -m pip download -q --dest "$dest/wheels" --only-binary=:all: \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    --platform linux_aarch64 --python-version "$box_python" --implementation cp --abi "cp${box_python/./}" --abi abi3 --abi none \
    -c requirements.lock "$wheel"
# lgpio publishes no aarch64 wheel for its pinned version: ship the sdist (it bundles the C library) and let
# install-box.sh compile it in the target, unless a wheel built there before is in SVOYAK_WHEEL_CACHE.
lgpio=$(grep -i '^lgpio==' requirements.lock)
abi="cp${box_python/./}"
cached=("${SVOYAK_WHEEL_CACHE:-/nonexistent}/lgpio-${lgpio#*==}-$abi"-*aarch64*.whl)
if [ -f "${cached[0]}" ]; then
    cp "${cached[0]}" "$dest/wheels/"
    lgpio_from="the wheel cache"
else
    lgpio_from="its sdist (compiled in the target)"
    mkdir -p "$dest/sdists"
    "$python" -m pip download -q --no-deps --no-binary=:all: --dest "$dest/sdists" "$lgpio"
    # What it builds with: the setuptools requirements.lock pins (a venv on 3.13 has none; 3.11's has 66,
    # without bdist_wheel).
    "$python" -m pip download -q --no-deps --only-binary=:all: --dest "$dest/build-wheels" \
        "$(grep -i '^setuptools==' requirements.lock)"
fi
count=$(find "$dest/wheels" -name '*.whl' | wc -l)
echo "bundle: $dest: $count wheels ($(du -sh "$dest/wheels" | cut -f1)), lgpio from $lgpio_from"
