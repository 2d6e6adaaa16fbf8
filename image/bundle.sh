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

rm -rf "$dest"
mkdir -p "$dest/wheels"
cp image/install-box.sh requirements.lock "$dest/"
cp -r systemd "$dest/systemd"
[ -d docs ] && cp -r docs "$dest/docs"

# The project wheel (pure Python: one wheel serves every architecture).
"$python" -m pip wheel -q --no-deps --wheel-dir "$dest/wheels" .
wheels=("$dest"/wheels/svoyak-*.whl)
wheel=${wheels[0]}

# Its dependencies for the box's Python (Debian bookworm / Raspberry Pi OS bookworm: CPython 3.11, aarch64),
# pinned by requirements.lock. pip evaluates environment markers for the machine it runs on, not for
# --platform, so the aarch64-only lgpio is skipped here and fetched below.
"$python" -m pip download -q --dest "$dest/wheels" --only-binary=:all: \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    --platform linux_aarch64 --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none \
    -c requirements.lock "$wheel"
# lgpio publishes no aarch64 wheel for its pinned version: ship the sdist (it bundles the C library) and let
# install-box.sh compile it in the target, unless a wheel built there before is in SVOYAK_WHEEL_CACHE.
lgpio=$(grep -i '^lgpio==' requirements.lock)
cached=("${SVOYAK_WHEEL_CACHE:-/nonexistent}"/lgpio-"${lgpio#*==}"-cp311-*aarch64*.whl)
if [ -f "${cached[0]}" ]; then
    cp "${cached[0]}" "$dest/wheels/"
    lgpio_from="the wheel cache"
else
    lgpio_from="its sdist (compiled in the target)"
    mkdir -p "$dest/sdists"
    "$python" -m pip download -q --no-deps --no-binary=:all: --dest "$dest/sdists" "$lgpio"
    # What it builds with: a setuptools that has bdist_wheel (70.1+; Python 3.11's ensurepip brings 66).
    "$python" -m pip download -q --no-deps --only-binary=:all: --dest "$dest/build-wheels" "setuptools>=70.1"
fi
count=$(find "$dest/wheels" -name '*.whl' | wc -l)
echo "bundle: $dest: $count wheels ($(du -sh "$dest/wheels" | cut -f1)), lgpio from $lgpio_from"
