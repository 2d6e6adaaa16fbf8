#!/bin/bash
# Boot the image that ./dev image built in qemu-system-aarch64 and check, with no one touching it, that
# both services come up under systemd and the host page and scoreboard answer through a forwarded port.
#
#   ./dev image-test            (about 2 min on a 2-core machine without KVM; image/README.md)
#   ./dev image-test --display  the same with a virtual display (virtio-gpu): the kiosk must start and show
#                               the scoreboard; a screenshot goes to image/out/kiosk.png
#
# QEMU has no GPIO, HDMI or Wi-Fi: the capture service runs on mock pins (systemd.setenv= on the kernel
# command line, so the image itself is not changed), and the kiosk and hotspot units skip themselves (their
# Condition...= lines). The disk is opened with -snapshot: every run is a first boot.
# Prints a timeline and a verdict; the serial console is kept in image/out/serial.log. Exit 0 = all green.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${SVOYAK_IMAGE_OUT:-image/out}
TIMEOUT=${SVOYAK_IMAGE_TEST_TIMEOUT:-600}   # seconds to wait for everything
PORT=${SVOYAK_IMAGE_TEST_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
LOG="$OUT/serial.log"
DISPLAY_TEST=no
case "${1:-}" in
    --display) DISPLAY_TEST=yes ;;
    "") ;;
    *) echo "usage: $0 [--display]" >&2; exit 2 ;;
esac
MONITOR="$OUT/monitor.sock"

for file in svoyak-arm64.img vmlinuz initrd.img cmdline.txt; do
    [ -f "$OUT/$file" ] || { echo "image-test: $OUT/$file is missing: run ./dev image first" >&2; exit 2; }
done
command -v qemu-system-aarch64 >/dev/null || { echo "image-test: apt-get install qemu-system-arm" >&2; exit 2; }
command -v curl >/dev/null || { echo "image-test: apt-get install curl" >&2; exit 2; }

# SVOYAK_IMAGE_TEST_APPEND: more kernel arguments for a debugging run (systemd.journald.forward_to_console=1
# puts every unit's log into the serial log).
append="$(cat "$OUT/cmdline.txt") systemd.setenv=SVOYAK_PIN_FACTORY=mock systemd.wants=svoyak-bootreport.service ${SVOYAK_IMAGE_TEST_APPEND:-}"
rm -f "$LOG"
start=$(date +%s)
# -cpu max,pauth-impdef=on: the fastest TCG CPU measured (plain max is twice as slow: pointer
# authentication emulated in full). romfile= : no option ROM for the NIC (none ships for aarch64 here).
screen=(-nographic -monitor none)
if [ "$DISPLAY_TEST" = yes ]; then
    rm -f "$MONITOR" "$OUT/kiosk.png"
    screen=(-display none -monitor "unix:$MONITOR,server,nowait" -device virtio-gpu-pci)
fi
qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 2048 "${screen[@]}" \
    -serial "file:$LOG" -kernel "$OUT/vmlinuz" -initrd "$OUT/initrd.img" -append "$append" \
    -drive "file=$OUT/svoyak-arm64.img,format=raw,if=virtio" -snapshot \
    -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$PORT-:80" -device virtio-net-pci,netdev=n0,romfile= \
    </dev/null >/dev/null 2>&1 &
qemu=$!
stop_qemu() { kill "$qemu" 2>/dev/null && wait "$qemu" 2>/dev/null; return 0; }
trap stop_qemu EXIT
echo "image-test: qemu pid $qemu, host page forwarded to http://127.0.0.1:$PORT, serial log $LOG"

elapsed() { echo $(( $(date +%s) - start )); }
http_code() { curl --silent --output /dev/null --max-time 10 --write-out '%{http_code}' "http://127.0.0.1:$PORT$1" || true; }
report="" host="" board=""
while [ "$(elapsed)" -lt "$TIMEOUT" ]; do
    kill -0 "$qemu" 2>/dev/null || { echo "image-test: qemu exited early" >&2; break; }
    if [ -z "$report" ] && grep -q 'svoyak-bootreport:' "$LOG" 2>/dev/null; then
        report=$(grep -a -o 'svoyak-bootreport:.*' "$LOG" | head -1 | tr -d '\r')
        echo "image-test: [$(elapsed)s] $report"
    fi
    if [ -z "$host" ] && [ "$(http_code /host)" = 200 ]; then host=$(elapsed); echo "image-test: [${host}s] /host answers 200"; fi
    if [ -z "$board" ] && [ "$(http_code /board)" = 200 ]; then board=$(elapsed); echo "image-test: [${board}s] /board answers 200"; fi
    [ -n "$report" ] && [ -n "$host" ] && [ -n "$board" ] && break
    # The report comes once both services are active (or after 3 min of trying): then 2 more minutes at most.
    if [ -n "$report" ] && [ -z "${report_at:-}" ]; then report_at=$(elapsed); fi
    if [ -n "${report_at:-}" ] && [ $(( $(elapsed) - report_at )) -gt 120 ]; then break; fi
    sleep 2
done

# With a display: screenshots through QEMU's monitor until the kiosk shows a page (many colours, not a
# text console), for at most 4 minutes after the report.
screenshot() {  # screenshot PNG: prints the number of distinct colours sampled
    python3 - "$MONITOR" "$1" <<'PY'
import socket, struct, sys, time, zlib
monitor, png = sys.argv[1], sys.argv[2]
ppm = png[:-4] + ".ppm"
with socket.socket(socket.AF_UNIX) as sock:
    sock.connect(monitor)
    sock.settimeout(5)
    sock.recv(65536)
    sock.sendall(f"screendump {ppm}\n".encode())
    time.sleep(3)
with open(ppm, "rb") as file:
    magic, size, depth, pixels = file.read().split(b"\n", 3)
width, height = map(int, size.split())
rows = b"".join(b"\0" + pixels[y * width * 3:(y + 1) * width * 3] for y in range(height))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
with open(png, "wb") as file:
    file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
               + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
print(len({pixels[i:i + 3] for i in range(0, len(pixels) - 2, 3 * 31)}))
PY
}
colours=0
if [ "$DISPLAY_TEST" = yes ] && [ -n "$report" ]; then
    shot_until=$(( $(elapsed) + 240 ))
    while [ "$(elapsed)" -lt "$shot_until" ] && kill -0 "$qemu" 2>/dev/null; do
        colours=$(screenshot "$OUT/kiosk.png" 2>/dev/null || echo 0)
        echo "image-test: [$(elapsed)s] screenshot: $colours colours sampled"
        [ "$colours" -gt 16 ] && break
        sleep 10
    done
    # The page stays: a second screenshot 15 s later (a crashing compositor or browser shows black again).
    if [ "$colours" -gt 16 ]; then
        sleep 15
        colours=$(screenshot "$OUT/kiosk.png" 2>/dev/null || echo 0)
        echo "image-test: [$(elapsed)s] screenshot 15 s later: $colours colours sampled"
    fi
fi

# The verdict: every expectation, each on its own line.
failures=0
expect() {  # expect DESCRIPTION CONDITION...
    local what=$1; shift
    if "$@"; then echo "image-test: ok    $what"; else echo "image-test: FAIL  $what"; failures=$((failures + 1)); fi
}
has() { [[ "$report" == *"$1"* ]]; }
expect "boot report reached the serial console" test -n "$report"
expect "capture service active (mock pins)" has " capture=active "
expect "web service active" has " web=active "
expect "first boot done (identity, hotspot profile)" has " firstboot=active "
if [ "$DISPLAY_TEST" = yes ]; then
    expect "kiosk running on the display, never restarted" has " kiosk=active,0 "
    expect "the display shows a page, not a console (image/out/kiosk.png)" test "$colours" -gt 16
    # The bare page (header only, Socket.IO not connected) sampled 24 colours; the live waiting screen
    # (Wi-Fi QR code, network, PIN, anti-aliased large text) 324: more than 100 = the page got its state.
    expect "the page is live: the scoreboard got its state over Socket.IO" test "$colours" -gt 100
else
    expect "kiosk skipped: no display" has " kiosk=inactive,0 "
fi
expect "hotspot skipped: no Wi-Fi" has " hotspot=inactive "
expect "data on its own partition, read-write (/dev/vda3, ext4)" has " data=/dev/vda3,ext4,rw,"
expect "no unit in failed state" has " failed= end"
expect "no restart since boot: readiness and watchdogs kept (capture, web)" has " restarts=0,0 "
expect "host page answers through the forwarded port" test -n "$host"
expect "scoreboard answers through the forwarded port" test -n "$board"
failed_units=$(sed 's/\x1b\[[0-9;]*m//g' "$LOG" | grep -a -o 'Failed to start [^.]*' | sort -u | tr '\n' ';' || true)
expect "no unit failed to start during the boot ${failed_units:+($failed_units)}" test -z "$failed_units"
echo "image-test: kernel $(grep -a -m1 -o 'Linux version [^ ]*' "$LOG" || echo '?'), whole run $(elapsed)s"
if [ "$failures" -gt 0 ]; then
    echo "image-test: $failures check(s) failed; serial console in $LOG"
    exit 1
fi
echo "image-test: all green in $(elapsed)s"
