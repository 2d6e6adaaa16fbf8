#!/bin/sh
# For ./dev image-test --gpio and --raspi only (systemd.wants=svoyak-gpioreport.service on the kernel command
# line): writes the GPIO lines the capture service holds, and every edge interrupt of a line it holds with its
# kernel timestamp, to the kernel log (and so to the serial console). Root, read-only but for tracefs.
#   svoyak-gpio: chip gpiochip0: GPIOs 512-519, parent: platform/9030000.pl061, 9030000.pl061:
#   svoyak-gpio: line gpio-515 (|lg) in lo IRQ
#   svoyak-gpio: irq 42 lg at 12.345678      (CLOCK_MONOTONIC, trace_clock mono)
set -eu
say() { echo "svoyak-gpio: $*" > /dev/kmsg; }
tracing=/sys/kernel/tracing
mountpoint -q "$tracing" || mount -t tracefs tracefs "$tracing"
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
# The edge's interrupt, stamped on CLOCK_MONOTONIC: the clock of the GPIO character device's timestamp_ns.
echo mono > "$tracing/trace_clock"
echo 1 > "$tracing/events/irq/irq_handler_entry/enable"
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
seen=0
# Up to 4 minutes: each new edge interrupt of a held line, then the lines again (the LED the press lit).
for _ in $(seq 1200); do
    edges=$(grep -E "irq_handler_entry: irq=[0-9]+ name=($(echo "$consumers" | tr ' ' '|' | sed 's/|$//'))$" \
            "$tracing/trace" || true)
    count=$(printf '%s' "$edges" | grep -c . || true)
    if [ "$count" -gt "$seen" ]; then
        printf '%s\n' "$edges" | tail -n +$((seen + 1)) | sed -E 's/.* ([0-9]+\.[0-9]+): irq_handler_entry: irq=([0-9]+) name=(.*)/irq \2 \3 at \1/' \
            | while read -r edge; do say "$edge"; done
        seen=$count
        sleep 0.2
        lines
    fi
    sleep 0.2
done
say "done"
