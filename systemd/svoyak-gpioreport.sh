#!/bin/sh
# For ./dev image-test --gpio and --raspi only (systemd.wants=svoyak-gpioreport.service on the kernel command
# line): writes the GPIO lines the capture service holds, and every edge interrupt of a line it holds with its
# kernel timestamp, to the kernel log (and so to the serial console). Root, read-only but for tracefs.
#   svoyak-gpio: chip gpiochip0: GPIOs 512-519, parent: platform/9030000.pl061, 9030000.pl061:
#   svoyak-gpio: line gpio-515 (|lg) in lo IRQ
#   svoyak-gpio: at 12.345678 irq 42 lg     an edge interrupt of a held line (CLOCK_MONOTONIC, trace_clock mono)
#   svoyak-gpio: at 12.349876 set gpio-516 1   a line written (the LED the press lit)
set -eu
say() { echo "svoyak-gpio: $*" > /dev/kmsg; }
tracing=/sys/kernel/tracing
mountpoint -q "$tracing" || mount -t tracefs tracefs "$tracing"
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
# The edge's interrupt, stamped on CLOCK_MONOTONIC: the clock of the GPIO character device's timestamp_ns.
echo mono > "$tracing/trace_clock"
echo 1 > "$tracing/events/irq/irq_handler_entry/enable"
echo 1 > "$tracing/events/gpio/gpio_value/enable"
echo 1 > "$tracing/tracing_on"
for _ in $(seq 150); do systemctl -q is-active svoyak-capture.service && break; sleep 2; done
sleep 3
lines() {  # the chips and every line a consumer holds
    sed -n -e 's/^\(gpiochip[0-9]*: .*\)/chip \1/p' -e 's/^ *\(gpio-[0-9]* (.*|[^ ]*\) *) \(.*\)$/line \1) \2/p' \
        /sys/kernel/debug/gpio | tr -s ' ' | while read -r entry; do say "$entry"; done
}
lines
consumers=$(sed -n 's/^ *gpio-[0-9]* ([^|]*|\([^ )]*\).*/\1/p' /sys/kernel/debug/gpio | sort -u | tr '\n' ' ')
say "ready consumers=${consumers}"
# The network as the box sees it (the raspi3b test reaches it over QEMU's usb-net), again whenever it changes.
network() { { ip -br addr; nmcli -t -f DEVICE,TYPE,STATE,CONNECTION device 2>&1; } 2>/dev/null | tr -s ' '; }
shown_network=$(network)
printf '%s\n' "$shown_network" | while read -r entry; do say "net $entry"; done
# When the scoreboard first answers on the box itself (seconds since the kernel started: about power-on).
board_answered=""
# SVOYAK_TEST_PRESSES (the --gpio test sets it with systemd.setenv=): once that many presses (two edges each)
# went through the capture service, stop it and time the other ways of reading edges (gpio-bench).
presses=${SVOYAK_TEST_PRESSES:-0}
seen=0
pattern="irq_handler_entry: irq=[0-9]+ name=($(echo "$consumers" | sed 's/ *$//; s/ /|/g'))\$|gpio_value: [0-9]+ set [01]"
# Up to 4 minutes: each new edge interrupt of a held line and each line written, then the lines again.
for _ in $(seq 1200); do
    events=$(grep -E "$pattern" "$tracing/trace" || true)
    count=$(printf '%s' "$events" | grep -c . || true)
    if [ "$count" -gt "$seen" ]; then
        printf '%s\n' "$events" | tail -n +$((seen + 1)) | sed -E \
            -e 's/.* ([0-9]+\.[0-9]+): irq_handler_entry: irq=([0-9]+) name=(.*)/at \1 irq \2 \3/' \
            -e 's/.* ([0-9]+\.[0-9]+): gpio_value: ([0-9]+) set ([01]).*/at \1 set gpio-\2 \3/' \
            | while read -r event; do say "$event"; done
        seen=$count
        sleep 0.2
        lines
        edges=$(printf '%s\n' "$events" | grep -c "irq_handler_entry" || true)
        if [ "$presses" -gt 0 ] && [ "$edges" -ge $((presses * 2)) ]; then
            sleep 1
            systemctl stop svoyak-capture.service
            /opt/svoyak/bin/python /usr/local/lib/svoyak/gpio-bench "${SVOYAK_GPIO_CHIP:-pinctrl-bcm2835}" \
                "${SVOYAK_TEST_BUTTON:-3}" "${SVOYAK_TEST_LED:-4}" "${SVOYAK_TEST_BENCH_PRESSES:-5}" || say "bench failed"
            break
        fi
    fi
    if [ -z "$board_answered" ] && [ "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' http://127.0.0.1/board)" = 200 ]; then
        board_answered=$(cut -d' ' -f1 /proc/uptime)
        say "board answers 200 on the box at ${board_answered}s"
    fi
    now_network=$(network)
    if [ "$now_network" != "$shown_network" ]; then
        shown_network=$now_network
        printf '%s\n' "$shown_network" | while read -r entry; do say "net $entry"; done
    fi
    sleep 0.2
done
say "done"
