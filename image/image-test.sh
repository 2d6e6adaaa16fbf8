#!/bin/bash
# Boot the image that ./dev image built in qemu-system-aarch64 and check, with no one touching it, that
# both services come up under systemd and the host page and scoreboard answer through a forwarded port.
#
#   ./dev image-test             QEMU's virt board, capture on mock pins (about 2 min on 2 cores, no KVM)
#   ./dev image-test --display   the same with a virtual display (virtio-gpu): the kiosk must start and show
#                                the scoreboard; a screenshot goes to image/out/kiosk.png
#   ./dev image-test --raspi     QEMU's raspi3b board: the image's own kernel, the Pi 3's device tree, the
#                                image as its SD card; the capture service on the real pinctrl-bcm2835 chip
#   ./dev image-test --gpio      virt without its gpio-keys node: PL061 line 3 is player 1's button, pressed
#                                from here over QMP (system_powerdown), through lgpio, capture, LED, engine, board
#   ./dev image-test --power-cut virt, a scripted battle, QEMU killed (SIGKILL), booted again: the same state,
#                                and the root and data file systems checked clean by e2fsck
#   ./dev image-test --raspi-power-cut  raspi3b booted from the card, QEMU killed once the box is up (no battle:
#                                QEMU's usb-net gets no lease), the file systems checked, booted again
#
# The disk is opened with -snapshot or a throwaway qcow2 overlay: every run is a first boot and the image is not
# changed. Every board boots what is flashed: the kernel, the initrd, the device tree (raspi3b) and the kernel
# command line come from the card's own boot partition (config.txt, cmdline.txt), read by image/cardboot.py,
# which refuses a test command line that differs from the card's beyond its test-only arguments.
# Timeouts follow the boot: the wait ends when the guest's own boot report comes (then a few minutes for the
# pages, measured from it), or when the guest has said nothing on its serial console for STALL seconds.
# Prints a timeline and a verdict; the serial console is kept in image/out/serial.log. Exit 0 = green.
set -euo pipefail
# SC2317: the check functions are called through expect(), which shellcheck cannot follow.
# shellcheck disable=SC2317
# One block: bash reads it whole before running it, so editing the file mid-run is safe.
{
cd "$(dirname "$0")/.."
OUT=${SVOYAK_IMAGE_OUT:-image/out}
# No fixed wall clock: the guest's silence on its serial console (STALL) ends a wait; LIMIT only bounds a guest
# that keeps talking and never boots (a loop of restarts).
STALL=${SVOYAK_IMAGE_TEST_STALL:-300}
LIMIT=${SVOYAK_IMAGE_TEST_LIMIT:-3600}
PORT=${SVOYAK_IMAGE_TEST_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
PYTHON=${SVOYAK_VENV:-.venv}/bin/python      # the project's venv (./dev makes it): python-socketio for battle.py
LOG=${SVOYAK_IMAGE_TEST_LOG:-$OUT/serial.log}   # another run at the same time needs its own
MODE=virt
case "${1:-}" in
    --display) MODE=display ;;
    --raspi) MODE=raspi ;;
    --gpio) MODE=gpio ;;
    --power-cut) MODE=power-cut ;;
    --raspi-power-cut) MODE=raspi-power-cut ;;
    "") ;;
    *) echo "usage: $0 [--display|--raspi|--gpio|--power-cut|--raspi-power-cut]" >&2; exit 2 ;;
esac
MONITOR="$OUT/monitor.sock"
# After the boot report: how long the pages may take to answer through the forwarded port, measured from it.
AFTER_REPORT=120; [ "${MODE#raspi}" != "$MODE" ] && AFTER_REPORT=420
QMP="$OUT/qmp.sock"

[ -f "$OUT/svoyak-arm64.img" ] || { echo "image-test: $OUT/svoyak-arm64.img is missing: run ./dev image first" >&2; exit 2; }
for tool in qemu-system-aarch64 qemu-img curl dtc e2fsck sfdisk mcopy; do
    command -v "$tool" >/dev/null || { echo "image-test: missing $tool (./dev image-test installs it)" >&2; exit 2; }
done

start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
say() { echo "image-test: [$(elapsed)s] $*"; }
qemu=""
stop_qemu() { if [ -n "$qemu" ]; then kill "$qemu" 2>/dev/null && wait "$qemu" 2>/dev/null; qemu=""; fi; return 0; }
trap stop_qemu EXIT
http_code() { curl --silent --output /dev/null --max-time 10 --write-out '%{http_code}' "http://127.0.0.1:$PORT$1" || true; }

# --- how each board boots. QEMU has no HDMI or Wi-Fi: the kiosk and hotspot units skip themselves (their
# Condition...= lines). On virt there is no Pi GPIO: the capture service runs on mock pins unless --gpio.
# -cpu max,pauth-impdef=on: the fastest TCG CPU measured (plain max is twice as slow: pointer authentication
# emulated in full). romfile= : no option ROM for the NIC (none ships for aarch64 here).
# shellcheck disable=SC2054  # the commas belong to -cpu's value
VIRT=(-M virt -cpu max,pauth-impdef=on -smp 2 -m 2048)
# The test-only kernel arguments every boot adds to the card's (image/cardboot.py TEST_ONLY says why each):
# the boot report, and systemd's and the units' messages forwarded to the kernel log, so to the serial port,
# whatever /dev/console is (the card's: tty1, the HDMI screen).
TEST_APPEND="systemd.wants=svoyak-bootreport.service systemd.journald.forward_to_kmsg=1"
TEST_APPEND="$TEST_APPEND systemd.journald.max_level_kmsg=info printk.devkmsg=on ${SVOYAK_IMAGE_TEST_APPEND:-}"
kernel="" initrd="" dtb="" append="" card="" ignored=""
card_files() {  # card_files BOARD [TEST-ONLY ARGS...]: the card's boot files and command line, in $kernel etc.
    local board=$1 plan; shift
    plan=$(python3 image/cardboot.py files "$OUT/svoyak-arm64.img" "$OUT/card-$board" --board "$board" \
           --append "$TEST_APPEND $*") || { echo "image-test: the card cannot be booted as flashed (above)" >&2; exit 1; }
    eval "$plan"
    say "the card's cmdline.txt: $card"
    say "$board boots the card's $(basename "$kernel"), $(basename "$initrd")${dtb:+, $(basename "$dtb")}; config.txt lines QEMU does not honour: ${ignored:-none}"
}
boot_virt() {  # boot_virt DISK_ARGS APPEND [QEMU ARGS...]: start QEMU in the background, pid in $qemu
    local disk=$1 append=$2; shift 2
    rm -f "$LOG"
    # shellcheck disable=SC2086  # DISK_ARGS is a word list on purpose
    qemu-system-aarch64 "${VIRT[@]}" -serial "file:$LOG" -kernel "$kernel" -initrd "$initrd" \
        -append "$append" $disk \
        -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$PORT-:80" -device virtio-net-pci,netdev=n0,romfile= \
        "$@" </dev/null >/dev/null 2>&1 &
    qemu=$!
}
boot_raspi() {  # boot_raspi QCOW2: QEMU's raspi3b on the card's kernel, initrd, device tree and command line
    rm -f "$LOG"
    qemu-system-aarch64 -M raspi3b -m 1G -kernel "$kernel" -initrd "$initrd" -dtb "$dtb" \
        -append "$append" -drive "file=$1,format=qcow2,if=sd" \
        -serial null -serial "file:$LOG" -display none -monitor none \
        -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$PORT-:80" -device usb-net,netdev=n0 \
        </dev/null >/dev/null 2>&1 &
    qemu=$!
}
overlay() {  # overlay FILE SIZE: a qcow2 file over the image (the image itself is never written)
    rm -f "$1"
    qemu-img create -q -f qcow2 -F raw -b "$(realpath "$OUT/svoyak-arm64.img")" "$1" "$2"
}

# --- waiting for the boot: the boot report line, /host and /board answering
report="" host="" board="" report_at="" booted_at=""
log_size() { stat -c %s "$LOG" 2>/dev/null || echo 0; }
wait_for_boot() {
    report="" host="" board="" report_at="" booted_at=""
    local began size last_size=-1 last_change
    began=$(elapsed); last_change=$began
    while [ $(( $(elapsed) - began )) -lt "$LIMIT" ]; do
        kill -0 "$qemu" 2>/dev/null || { echo "image-test: qemu exited early" >&2; break; }
        size=$(log_size)
        if [ "$size" != "$last_size" ]; then last_size=$size; last_change=$(elapsed); fi
        if [ -z "$report" ] && [ $(( $(elapsed) - last_change )) -gt "$STALL" ]; then
            say "the guest said nothing on its serial console for ${STALL}s before its boot report: giving up"
            break
        fi
        if [ -z "$report" ] && grep -q 'svoyak-bootreport:' "$LOG" 2>/dev/null; then
            report=$(grep -a -o 'svoyak-bootreport:.*' "$LOG" | head -1 | tr -d '\r')
            report_at=$(elapsed); booted_at=$(( report_at - began ))
            say "$report"
        fi
        if [ -z "$host" ] && [ "$(http_code /host)" = 200 ]; then host=$(elapsed); say "/host answers 200"; fi
        if [ -z "$board" ] && [ "$(http_code /board)" = 200 ]; then board=$(elapsed); say "/board answers 200"; fi
        [ -n "$report" ] && [ -n "$host" ] && [ -n "$board" ] && break
        # The report comes once both services are active (or after 8 min of trying): then a few minutes more at
        # most for the network (on raspi3b NetworkManager and DHCP over emulated USB take minutes). Its time is
        # taken when it is seen (above), even when the pages answered first.
        if [ -n "$report_at" ] && [ $(( $(elapsed) - report_at )) -gt "$AFTER_REPORT" ]; then break; fi
        sleep 2
    done
}
capture="" factory=""
capture_status() {  # the capture service as the scoreboard reports it: {"factory": ..., "precision": ...}
    [ -n "$board" ] || return 0
    capture=$("$PYTHON" image/battle.py status "http://127.0.0.1:$PORT" 2>>"$OUT/battle.err" | tail -1) || capture=""
    factory=$(python3 -c 'import json,sys; c=json.loads(sys.argv[1])["capture"]; print(c["factory"] + "," + c["precision"])' "$capture" 2>/dev/null || true)
    say "capture as the board shows it: ${capture:-nothing}"
}
# the host's PIN (first boot prints the director's too, on the next line)
host_pin() { sed 's/\x1b\[[0-9;]*m//g' "$LOG" | grep -a -o '/host  *PIN: [0-9]*' | tail -1 | sed 's/.*PIN: //'; }
gpio_lines() { grep -a -o 'svoyak-gpio: .*' "$LOG" | tr -d '\r'; }

# --- the verdict: every expectation, each on its own line
failures=0
expect() {  # expect DESCRIPTION CONDITION...
    local what=$1; shift
    if "$@"; then echo "image-test: ok    $what"; else echo "image-test: FAIL  $what"; failures=$((failures + 1)); fi
}
has() { [[ "$report" == *"$1"* ]]; }
expect_boot() {  # expect_boot DATA_DEVICE [FORWARDED=yes|no]: what every boot must show
    expect "boot report reached the serial console" test -n "$report"
    expect "web service active" has " web=active "
    expect "capture service active" has " capture=active "
    expect "first boot done (identity, hotspot profile)" has " firstboot=active "
    expect "hotspot skipped: no Wi-Fi" has " hotspot=inactive "
    expect "data on its own partition, read-write ($1, ext4)" has " data=$1,ext4,rw,"
    expect "no unit in failed state" has " failed= "
    expect "no restart since boot: readiness and watchdogs kept (capture, web)" has " restarts=0,0 "
    expect "the box's own Python runs the project (smoke check)" has " python=3.13."
    expect "the root was checked by e2fsck in the initrd before it was mounted (fsck.repair=yes)" has " rootfsck=checked "
    if [ "${2:-yes}" = yes ]; then
        expect "host page answers through the forwarded port" test -n "$host"
        expect "scoreboard answers through the forwarded port" test -n "$board"
    else
        echo "image-test: n/a   pages through the forwarded port: the guest's network is down (see above)"
    fi
    # Every problem the serial log shows (image/cardboot.py check-log): a dependency failed, a unit failed or
    # never started, a device never came, emergency mode, the initrd's shell.
    local problems
    problems=$(python3 image/cardboot.py check-log "$LOG" | tr '\n' ';' || true)
    expect "no dependency failed, no unit failed or never started, no emergency mode ${problems:+($problems)}" \
        test -z "$problems"
    say "boot report ${booted_at:-never} s after QEMU started"
}
finish() {
    echo "image-test: kernel $(grep -a -m1 -o 'Linux version [^ ]*' "$LOG" || echo '?'), whole run $(elapsed)s"
    if [ "$failures" -gt 0 ]; then
        echo "image-test: $failures check(s) failed; serial console in $LOG"
        exit 1
    fi
    echo "image-test: all green in $(elapsed)s"
    exit 0
}

# After a power cut: the root and the data file systems, copied out of the disk as the cut left it, checked on
# the copy: the journal replayed, then every structure (e2fsck -fy), then nothing more to find (-fn). After an
# unclean stop e2fsck always rewrites the superblock's free block and inode counts (ext4 keeps them lazily; the
# kernel recounts them when it mounts): any other repair is damage. Sets root_/data_ replay, clean, repairs.
fsck_partition() {  # fsck_partition DISK INDEX NAME: prints "REPLAY CLEAN REPAIRS"
    local disk=$1 index=$2 name=$3 start size replay=0 clean=0 repairs
    # (the partition table is the image's: the box never rewrites it)
    read -r start size < <(sfdisk -J "$OUT/svoyak-arm64.img" \
        | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitiontable"]["partitions"][int(sys.argv[1])]; print(p["start"], p["size"])' "$index")
    rm -f "$OUT/$name-after-cut.ext4"
    # (qemu-img dd cannot skip that far into a qcow2: a raw window over it instead)
    qemu-img convert -O raw --image-opts \
        "driver=raw,offset=$((start * 512)),size=$((size * 512)),file.driver=qcow2,file.file.driver=file,file.file.filename=$disk" \
        "$OUT/$name-after-cut.ext4"
    e2fsck -fy "$OUT/$name-after-cut.ext4" > "$OUT/fsck-$name.log" 2>&1 || replay=$?
    e2fsck -fn "$OUT/$name-after-cut.ext4" >> "$OUT/fsck-$name.log" 2>&1 || clean=$?
    rm -f "$OUT/$name-after-cut.ext4"
    repairs=$(grep -B1 '^Fix? yes' "$OUT/fsck-$name.log" | grep -v -e '^Fix? yes' -e '^--$' \
              -e '^Free blocks count wrong' -e '^Free inodes count wrong' | tr '\n' ';' || true)
    echo "$replay $clean ${repairs:-none}"
}
check_after_cut() {  # check_after_cut DISK
    read -r root_replay root_clean root_repairs < <(fsck_partition "$1" 1 root)
    read -r data_replay data_clean data_repairs < <(fsck_partition "$1" 2 data)
    say "e2fsck after the cut, root: $root_replay (journal replay and check), then $root_clean (read-only check); repairs beyond the free counts: $root_repairs"
    say "e2fsck after the cut, data: $data_replay, then $data_clean; repairs beyond the free counts: $data_repairs"
}
expect_clean_after_cut() {
    expect "the data file system is clean after the power cut (e2fsck -fy: $data_replay, -fn: $data_clean)" \
        test "$data_replay" -le 1 -a "$data_clean" = 0 -a "$data_repairs" = none
    # The root too: the box mounts it read-write (journal, NetworkManager's state); after the cut only its
    # journal may need replaying, which the initrd's e2fsck does before the next mount.
    expect "the root file system is clean after the power cut (e2fsck -fy: $root_replay, -fn: $root_clean)" \
        test "$root_replay" -le 1 -a "$root_clean" = 0 -a "$root_repairs" = none
    expect "after the cut the initrd checked the root again before mounting it" has " rootfsck=checked "
}

# With a display: screenshots through QEMU's monitor until the kiosk shows a page (many colours, not a
# text console).
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

case "$MODE" in
virt|display)
    screen=(-nographic -monitor none)
    if [ "$MODE" = display ]; then
        rm -f "$MONITOR" "$OUT/kiosk.png"
        screen=(-display none -monitor "unix:$MONITOR,server,nowait" -device virtio-gpu-pci)
    fi
    card_files virt systemd.setenv=SVOYAK_PIN_FACTORY=mock
    boot_virt "-drive file=$OUT/svoyak-arm64.img,format=raw,if=virtio -snapshot" "$append" "${screen[@]}"
    say "qemu pid $qemu (virt), host page forwarded to http://127.0.0.1:$PORT, serial log $LOG"
    wait_for_boot
    colours=0
    if [ "$MODE" = display ] && [ -n "$report" ]; then
        shot_until=$(( $(elapsed) + 240 ))
        while [ "$(elapsed)" -lt "$shot_until" ] && kill -0 "$qemu" 2>/dev/null; do
            colours=$(screenshot "$OUT/kiosk.png" 2>/dev/null || echo 0)
            say "screenshot: $colours colours sampled"
            [ "$colours" -gt 16 ] && break
            sleep 10
        done
        # The page stays: a second screenshot 15 s later (a crashing compositor or browser shows black again).
        if [ "$colours" -gt 16 ]; then
            sleep 15
            colours=$(screenshot "$OUT/kiosk.png" 2>/dev/null || echo 0)
            say "screenshot 15 s later: $colours colours sampled"
        fi
    fi
    capture_status
    expect_boot /dev/vda3
    expect "capture service on mock pins (no GPIO on virt), linked to the web service" test "$factory" = mock,mock
    if [ "$MODE" = display ]; then
        expect "kiosk running on the display, never restarted" has " kiosk=active,0 "
        expect "the display shows a page, not a console (image/out/kiosk.png)" test "$colours" -gt 16
        # The bare page (header only, Socket.IO not connected) sampled 24 colours; the live waiting screen
        # (Wi-Fi QR code, network, PIN, anti-aliased large text) 324: more than 100 = the page got its state.
        expect "the page is live: the scoreboard got its state over Socket.IO" test "$colours" -gt 100
    else
        expect "kiosk skipped: no display" has " kiosk=inactive,0 "
    fi
    finish ;;

raspi)
    # The kernel package's own Pi 3 device tree, as it is: no /system/linux,revision in it (the Pi's firmware
    # may add one; QEMU does not), so gpiozero's board comes from the tree's model (gpio/pins.py).
    # QEMU wants an SD card of a power-of-two size: a 4 GiB overlay over the smaller image.
    overlay "$OUT/raspi-sd.qcow2" 4G
    # The card's own command line: the Pi 3's serial header is the mini UART (ttyS1; the PL011 serves
    # Bluetooth), QEMU's second serial port; its last console, tty1, is the HDMI screen (QEMU's framebuffer,
    # not looked at: what systemd and first boot say there reaches the serial log through the kernel log).
    # Under emulation udev takes minutes to name the partitions (/dev/disk/by-label): the card's fstab gives
    # each its own device timeout (x-systemd.device-timeout=), nothing is added here.
    # QEMU's usb-net (0525:a4a2, the Linux USB Ethernet gadget's id) comes up in its CDC Ethernet configuration,
    # but cdc_subset (which claims that id for gadgets without CDC descriptors) took its data interface first,
    # with a random MAC, and cdc_ether failed with EBUSY (-16). Without cdc_subset, cdc_ether binds it with
    # QEMU's MAC (52:54:00:12:34:57), but the lease still did not come (measured: link-local only): the rest
    # is in QEMU's emulated USB path, not found yet. A Pi's own Ethernet is smsc95xx/lan78xx: test-only.
    card_files raspi3b modprobe.blacklist=cdc_subset systemd.wants=svoyak-gpioreport.service
    boot_raspi "$OUT/raspi-sd.qcow2"
    say "qemu pid $qemu (raspi3b), host page forwarded to http://127.0.0.1:$PORT over usb-net, serial log $LOG"
    wait_for_boot
    # the GPIO report follows the capture service by a few seconds
    for _ in $(seq 30); do gpio_lines | grep -q 'svoyak-gpio: ready' && break; sleep 2; done
    gpio=$(gpio_lines)
    printf '%s\n' "$gpio" | sed 's/^/image-test:       /'
    model=$(grep -a -m1 -o 'Machine model: .*' "$LOG" | tr -d '\r' || true)
    on_box=$(gpio_lines | sed -n 's/.*board answers 200 on the box at \([0-9.]*\)s.*/\1/p' | head -1)
    say "${model:-no machine model in the log}; the board answered on the box ${on_box:-never} s after the kernel started, through the forwarded port at ${board:-never} s"
    capture_status
    forwarded=yes
    if [ -z "$board" ]; then
        # QEMU 7.2's usb-net got no DHCP lease from its own user-mode network here (the box fell back to a
        # link-local address; the driver: above): the pages are checked on the box itself, and the capture service's
        # pin factory from the lines it holds (consumer "lg" is lgpio).
        say "no page through usb-net: $(gpio_lines | grep -E 'net (enu|enx|usb)' | tail -2 | tr '\n' ' ')"
        forwarded=no
        if printf '%s\n' "$gpio" | grep -q "line gpio-[0-9]* ([^|]*|lg) in"; then factory=lgpio,kernel; fi
    fi
    expect_boot /dev/mmcblk0p3 "$forwarded"
    expect "the scoreboard answers on the box (curl in the guest, ${on_box:-never} s after the kernel started)" \
        test -n "$on_box"
    expect "the kernel runs on the Pi 3's own device tree ($model)" test "$model" = "Machine model: Raspberry Pi 3 Model B"
    source_of_factory="as the board shows it"; [ "$forwarded" = yes ] || source_of_factory="from the lines it holds"
    expect "capture service on lgpio with kernel timestamps, no mock ($factory, $source_of_factory)" \
        test "$factory" = lgpio,kernel
    chip() { printf '%s\n' "$gpio" | grep -q "svoyak-gpio: chip gpiochip[0-9]*: .*pinctrl-bcm2835"; }
    expect "the header's chip found by its label: pinctrl-bcm2835" chip
    # debugfs numbers the lines from the chip's base (gpio-512 is GPIO0); the names come from the tree
    base=$(printf '%s\n' "$gpio" | sed -n 's/.*chip gpiochip[0-9]*: GPIOs \([0-9]*\)-.*pinctrl-bcm2835.*/\1/p' | head -1)
    held() {  # held GPIO DIRECTION: GPIO<n> held by lgpio (consumer "lg") in that direction
        printf '%s\n' "$gpio" | grep -q "svoyak-gpio: line gpio-$(( ${base:-0} + $1 )) ([^|]*|lg) $2"
    }
    for pin in 17 27 22 23 24; do expect "button GPIO$pin requested by lgpio as an input" held "$pin" in; done
    for pin in 5 6 13 19 18; do expect "LED/buzzer GPIO$pin driven by lgpio, off (low)" held "$pin" "out lo"; done
    finish ;;

gpio)
    # QEMU's own device tree for this machine, without the gpio-keys node that would claim PL061 line 3,
    # and with a Pi revision where gpiozero reads it (/system/linux,revision): a Compute Module 3 (a020a0),
    # whose GPIO3 has no pull-up on the module. On a Pi board GPIO2/3 carry the I2C pull-ups (1.8 kΩ), and
    # gpiozero refuses any other pull there: a button wired to 3.3 V cannot use them.
    rm -f "$OUT/virt.dtb"
    qemu-system-aarch64 "${VIRT[@]}" -machine "dumpdtb=$OUT/virt.dtb" -display none >/dev/null 2>&1 || true
    dtc -q -I dtb -O dts -o "$OUT/virt.dts" "$OUT/virt.dtb"
    python3 - "$OUT/virt.dts" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
start = re.search(r"\n\s*gpio-keys \{", text)
assert start, "no gpio-keys node in QEMU's virt device tree"
depth, i = 0, text.index("{", start.start())
while True:
    depth += {"{": 1, "}": -1}.get(text[i], 0)
    i += 1
    if depth == 0:
        break
end = text.index(";", i) + 1
open(path, "w").write(text[:start.start()] + text[end:] + "\n/ { system { linux,revision = <0xa020a0>; }; };\n")
PY
    dtc -q -I dts -O dtb -o "$OUT/virt-nokeys.dtb" "$OUT/virt.dts"
    # Player 1's button on line 3 (the line QMP raises), its LED on line 4; PL061 has lines 0-7. The line idles
    # low and goes high while "pressed": buttons_active_low=false (pull-downs).
    settings="SVOYAK_GPIO_CHIP=9030000.pl061 SVOYAK_PLAYER_BUTTONS=3,5 SVOYAK_PLAYER_LEDS=4,6 SVOYAK_BUZZER_PIN=7"
    settings="$settings SVOYAK_RESET_BUTTON=2 SVOYAK_BUTTONS_ACTIVE_LOW=false"
    # SVOYAK_IMAGE_TEST_BUTTON_READER=cdev: the buttons in one character-device line request (gpio/cdev.py,
    # consumer "svoyak-buttons") instead of lgpio's per-line alerts (consumer "lg"); the LEDs stay on lgpio.
    reader=${SVOYAK_IMAGE_TEST_BUTTON_READER:-factory}
    settings="$settings SVOYAK_BUTTON_READER=$reader"
    consumer=lg; [ "$reader" = cdev ] && consumer=svoyak-buttons
    # After the presses through the capture service, the guest's gpio-bench times lgpio's Python callback and
    # the character device read directly, $bench presses each (systemd/svoyak-gpiobench.py).
    presses=${SVOYAK_IMAGE_TEST_PRESSES:-5}
    bench=${SVOYAK_IMAGE_TEST_BENCH_PRESSES:-10}
    settings="$settings SVOYAK_TEST_PRESSES=$presses SVOYAK_TEST_BENCH_PRESSES=$bench"
    setenv=""
    for setting in $settings; do setenv="$setenv systemd.setenv=$setting"; done
    # shellcheck disable=SC2086  # a word list on purpose
    card_files virt systemd.wants=svoyak-gpioreport.service $setenv
    rm -f "$QMP"
    boot_virt "-drive file=$OUT/svoyak-arm64.img,format=raw,if=virtio -snapshot" "$append" \
        -dtb "$OUT/virt-nokeys.dtb" -qmp "unix:$QMP,server,nowait" -nographic -monitor none
    say "qemu pid $qemu (virt, no gpio-keys), QMP $QMP, serial log $LOG"
    wait_for_boot
    for _ in $(seq 30); do gpio_lines | grep -q 'svoyak-gpio: ready' && break; sleep 2; done
    capture_status
    pin=$(host_pin)
    result=""
    if [ -n "$pin" ] && [ -n "$board" ]; then
        say "pressing player 1's button $presses times over QMP"
        result=$("$PYTHON" image/battle.py press "http://127.0.0.1:$PORT" "$pin" "$QMP" --presses "$presses" \
                 2>"$OUT/battle.err" | tail -1) || true
        sleep 3   # the report writes the LED line after each edge
        for method in lgpio cdev; do
            for _ in $(seq 60); do gpio_lines | grep -q "bench $method ready" && break; sleep 1; done
            if gpio_lines | grep -q "bench $method ready"; then
                say "gpio-bench: pressing $bench times for $method"
                "$PYTHON" image/battle.py push "$QMP" --presses "$bench" >/dev/null 2>>"$OUT/battle.err" || true
            fi
        done
        for _ in $(seq 60); do gpio_lines | grep -q "bench done" && break; sleep 1; done
    fi
    gpio_lines > "$OUT/gpio.log" || true
    grep -E 'chip|line gpio-51[1-9] |ready' "$OUT/gpio.log" | sort -u | sed 's/^/image-test:       /' || true
    # The chain, from the serial log (kernel side) and the board's view (press timestamps), in one place.
    verdict=$(python3 - "$OUT/gpio.log" "$result" "$consumer" <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
result = json.loads(sys.argv[2]) if sys.argv[2].strip() else {}
consumer = re.escape(sys.argv[3])
base = int(re.search(r"chip gpiochip\d+: GPIOs (\d+)-", log).group(1)) if "chip gpiochip" in log else 0
irqs = [int(float(t) * 1e9) for t in re.findall(rf"at (\d+\.\d+) irq \d+ {consumer}\b", log)]
leds = [int(float(t) * 1e9) for t in re.findall(rf"at (\d+\.\d+) set gpio-{base + 4} 1", log)]
lit = bool(re.search(rf"line gpio-{base + 4} \([^|]*\|lg\) out hi", log))
presses = [p["t_ns"] for group in result.get("presses", []) for p in group[:1]]
# each press's at_ns against the nearest edge interrupt at or before it (the rising edge it was stamped on)
gaps_us = []
for at_ns in presses:
    before = [t for t in irqs if t <= at_ns + 1_000]
    gaps_us.append(round((at_ns - max(before)) / 1e3, 1) if before else None)
press_led_ms = []
for at_ns in presses:
    after = [t for t in leds if t >= at_ns]
    press_led_ms.append(round((min(after) - at_ns) / 1e6, 2) if after else None)
print(json.dumps({"irqs": len(irqs), "presses": len(presses), "answerers": result.get("answerers", []),
                  "latencies_ms": result.get("latencies_ms", []), "irq_to_at_us": gaps_us,
                  "press_to_led_ms": press_led_ms, "led_lit": lit}))
PY
) || verdict='{}'
    say "chain: $verdict"
    expect_boot /dev/vda3
    expect "capture service on lgpio with kernel timestamps, on the PL061 found by its label ($factory)" \
        test "$factory" = lgpio,kernel
    field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, v))' "$verdict" "$1" 2>/dev/null || echo False; }
    expect "line 3 requested as an input with its edge interrupt (consumer $consumer, button_reader=$reader)" \
        grep -qE "line gpio-[0-9]+ \([^|]*\|$consumer\) in .*IRQ" "$OUT/gpio.log"
    expect "every QMP press reached the board as player 1's press ($presses)" test "$(field "presses == $presses and set(answerers) == {0}")" = True
    expect "each press's at_ns is its kernel edge: 0-2000 µs after the edge interrupt" \
        test "$(field 'presses > 0 and all(g is not None and 0 <= g <= 2000 for g in irq_to_at_us)')" = True
    expect "the LED line (PL061 line 4) went high for each press" \
        test "$(field 'presses > 0 and all(d is not None for d in press_to_led_ms)')" = True
    expect "the LED line reads high in the guest after a press (debugfs: out hi)" test "$(field 'led_lit')" = True
    say "QMP → board (ms): $(field 'latencies_ms'); kernel edge → LED line written (ms): $(field 'press_to_led_ms')"
    bench_of() { gpio_lines | sed -n "s/.*bench $1 irq_to_led_us=//p" | tail -1; }
    for method in lgpio cdev; do
        figures=$(bench_of "$method")
        say "gpio-bench $method: edge interrupt → LED written (µs): ${figures:-none} $(python3 -c 'import statistics,sys,ast; v=ast.literal_eval(sys.argv[1]); print(f"median {statistics.median(v):.0f} µs, max {max(v):.0f} µs, n={len(v)}")' "${figures:-[]}" 2>/dev/null || true)"
        expect "gpio-bench timed $method on every press ($bench)" \
            python3 -c 'import ast,sys; sys.exit(len(ast.literal_eval(sys.argv[1])) < int(sys.argv[2]))' "${figures:-[]}" "$bench"
    done
    finish ;;

power-cut)
    # A disk that keeps what the box writes (an overlay over the image), a battle played to a known state, then
    # the power cut: SIGKILL, no shutdown, no sync.
    disk="$OUT/power-cut.qcow2"
    overlay "$disk" "$(stat -L -c %s "$OUT/svoyak-arm64.img")"
    card_files virt systemd.setenv=SVOYAK_PIN_FACTORY=mock
    boot_virt "-drive file=$disk,format=qcow2,if=virtio" "$append" -nographic -monitor none
    say "qemu pid $qemu (virt, persistent overlay $disk)"
    wait_for_boot
    expect_boot /dev/vda3
    pin=$(host_pin)
    before=""
    rm -f "$OUT/acks.log"
    if [ -n "$pin" ] && [ -n "$board" ]; then
        before=$("$PYTHON" image/battle.py play "http://127.0.0.1:$PORT" "$pin" --commands 3 2>"$OUT/battle.err" | tail -1) || true
        # The battle goes on: commands are still being sent, and acknowledged, when the power goes.
        "$PYTHON" image/battle.py play "http://127.0.0.1:$PORT" "$pin" --commands 40 >"$OUT/acks.log" 2>/dev/null &
        driver=$!
        for _ in $(seq 100); do [ "$(grep -c acked "$OUT/acks.log" 2>/dev/null || true)" -ge 4 ] && break; sleep 0.1; done
    fi
    kill -KILL "$qemu"; wait "$qemu" 2>/dev/null || true; qemu=""
    if [ -n "${driver:-}" ]; then kill "$driver" 2>/dev/null; wait "$driver" 2>/dev/null || true; fi
    acked=$(grep -c '"acked"' "$OUT/acks.log" 2>/dev/null || true)
    say "power cut: QEMU killed (SIGKILL) mid-battle, after ${acked:-0} more acknowledged commands"
    check_after_cut "$disk"
    boot_virt "-drive file=$disk,format=qcow2,if=virtio" "$append" -nographic -monitor none
    say "qemu pid $qemu: booting again"
    wait_for_boot
    after=""
    # the first boot's PIN must still open the host page: the identity survived the cut
    if [ -n "$board" ] && [ -n "$pin" ]; then
        after=$("$PYTHON" image/battle.py view "http://127.0.0.1:$PORT" "$pin" 2>>"$OUT/battle.err" | tail -1) || true
    fi
    compare=$(python3 - "$before" "$after" "$OUT/acks.log" <<'PY'
import json, sys
before = json.loads(sys.argv[1]) if sys.argv[1].strip() else None
after = json.loads(sys.argv[2]) if sys.argv[2].strip() else None
if not before or not after:
    print("missing"); sys.exit()
acks = [json.loads(line) for line in open(sys.argv[3]) if line.startswith('{"acked"')]
b, a = before["view"], after["view"]
played = lambda v: sum(len(t["played"]) for t in v["themes"])
names = lambda v: [p["name"] for p in v["players"]]
# The cut came during more commands: what the box acknowledged last is kept (a command sent but not yet
# acknowledged may or may not be: at most one step more).
last = acks[-1]["played"] if acks else played(b)
ok = b["battle"]["id"] == a["battle"]["id"] and names(b) == names(a) and last <= played(a) <= last + 1
print("ok" if ok else f"differs: battle {b['battle']['id']}->{a['battle']['id']}, played: acknowledged {last}, after {played(a)}")
PY
)
    say "state after the reboot: $compare"
    # and the battle goes on: the host's next steps are accepted after the reboot (a new boot's clock restarts)
    goes_on=""
    if [ -n "$after" ]; then
        goes_on=$("$PYTHON" image/battle.py play "http://127.0.0.1:$PORT" "$pin" --commands 2 2>>"$OUT/battle.err" \
                  | grep -c '"acked"' || true)
    fi
    say "after the reboot the host sent 2 more steps: ${goes_on:-0} acknowledged"
    expect_clean_after_cut
    expect "the box boots again after the power cut: both services, pages answer" test -n "$board"
    expect "the same battle after the reboot, no acknowledged command lost" test "$compare" = ok
    expect "the first boot's host PIN opens the host page after the reboot (the identity survived)" test -n "$after"
    expect "the battle goes on after the reboot: the host's next steps are accepted" test "${goes_on:-0}" = 2
    finish ;;

raspi-power-cut)
    # The card as a Pi 3 boots it, a disk that keeps what the box writes; the power goes once both services run
    # (the box is writing: its journal, the first boot's identity and hotspot profile). QEMU's usb-net gets no
    # DHCP lease here (--raspi), so no battle is driven from outside.
    disk="$OUT/raspi-cut.qcow2"
    overlay "$disk" 4G
    card_files raspi3b modprobe.blacklist=cdc_subset
    boot_raspi "$disk"
    say "qemu pid $qemu (raspi3b, persistent overlay $disk)"
    wait_for_boot
    expect_boot /dev/mmcblk0p3 no
    kill -KILL "$qemu"; wait "$qemu" 2>/dev/null || true; qemu=""
    say "power cut: QEMU killed (SIGKILL) $(( $(elapsed) - ${report_at:-0} ))s after the boot report"
    check_after_cut "$disk"
    boot_raspi "$disk"
    say "qemu pid $qemu: booting again"
    wait_for_boot
    expect_boot /dev/mmcblk0p3 no
    expect_clean_after_cut
    finish ;;
esac
exit 0
}
