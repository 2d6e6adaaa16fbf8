"""For ./dev image-test --gpio only: what each way of reading a GPIO edge costs, press -> LED, on a real kernel.

Run by /usr/local/lib/svoyak/gpio-report (as root, the capture service stopped) with the box's Python:

    gpio-bench CHIP_LABEL BUTTON LED PRESSES

Two ways, one after the other, each answering every edge of line BUTTON by writing line LED to the edge's level:

- ``lgpio``: lgpio's Python callback, as gpiozero's LGPIOFactory uses it: lgpio's alert thread polls the line
  (0.5 ms ppoll), holds each edge at least 0.5 ms so that edges of all lines leave in time order, writes it to
  a FIFO; a Python thread reads the FIFO and calls back.
- ``cdev``: the GPIO character device v2 read directly: one line request holds the button (both edges) and the
  LED (output); a thread blocks in read(); each event carries the kernel's timestamp and per-request sequence
  numbers (a total order of all lines of the request).

The cost is measured in the kernel, on one clock: the ftrace timestamp of the edge's interrupt
(irq_handler_entry, name = the request's consumer) to that of the LED's write (gpio_value ... set 1).
Prints ``svoyak-gpio: bench METHOD ready`` (the host presses then), and at the end
``svoyak-gpio: bench METHOD irq_to_led_us=[...]`` to the kernel log.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import struct
import sys
import threading
import time

TRACE = "/sys/kernel/tracing/trace"


def say(text: str) -> None:
    with open("/dev/kmsg", "w") as kmsg:
        kmsg.write(f"svoyak-gpio: {text}\n")


def find_chip(label: str) -> int:
    info = struct.Struct("32s32sI")
    request = (2 << 30) | (info.size << 16) | (0xB4 << 8) | 0x01
    for name in sorted(os.listdir("/dev")):
        if re.fullmatch(r"gpiochip\d+", name):
            fd = os.open(f"/dev/{name}", os.O_RDONLY)
            try:
                _, found, _ = info.unpack(fcntl.ioctl(fd, request, bytes(info.size)))
            finally:
                os.close(fd)
            if found.split(b"\0")[0].decode() == label:
                return int(name[len("gpiochip"):])
    raise SystemExit(f"gpio-bench: no chip labelled {label}")


def chip_base(number: int) -> int:
    """The global number of the chip's line 0 (what the gpio_value trace event prints)."""
    for line in open("/sys/kernel/debug/gpio"):
        match = re.match(rf"gpiochip{number}: GPIOs (\d+)-", line)
        if match:
            return int(match.group(1))
    raise SystemExit("gpio-bench: chip not in /sys/kernel/debug/gpio")


def wait_edges(counter: list, wanted: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while counter[0] < wanted and time.monotonic() < deadline:
        time.sleep(0.05)


def bench_lgpio(chip: int, button: int, led: int, presses: int) -> None:
    import lgpio

    handle = lgpio.gpiochip_open(chip)
    lgpio.gpio_claim_output(handle, led, 0)
    lgpio.gpio_claim_alert(handle, button, lgpio.BOTH_EDGES)
    rising = [0]

    def answer(chip_, gpio, level, tick):
        lgpio.gpio_write(handle, led, level)
        if level == 1:
            rising[0] += 1

    callback = lgpio.callback(handle, button, lgpio.BOTH_EDGES, answer)
    say("bench lgpio ready")
    wait_edges(rising, presses, 120)
    time.sleep(0.3)
    callback.cancel()
    lgpio.gpiochip_close(handle)


# linux/gpio.h, v2 ABI
LINE_FLAG_INPUT, LINE_FLAG_OUTPUT, LINE_FLAG_EDGE_RISING, LINE_FLAG_EDGE_FALLING = 1 << 2, 1 << 3, 1 << 4, 1 << 5
ATTR_ID_FLAGS = 1


class LineAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("padding", ctypes.c_uint32), ("value", ctypes.c_uint64)]


class ConfigAttribute(ctypes.Structure):
    _fields_ = [("attr", LineAttribute), ("mask", ctypes.c_uint64)]


class LineConfig(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("num_attrs", ctypes.c_uint32), ("padding", ctypes.c_uint32 * 5),
                ("attrs", ConfigAttribute * 10)]


class LineRequest(ctypes.Structure):
    _fields_ = [("offsets", ctypes.c_uint32 * 64), ("consumer", ctypes.c_char * 32), ("config", LineConfig),
                ("num_lines", ctypes.c_uint32), ("event_buffer_size", ctypes.c_uint32),
                ("padding", ctypes.c_uint32 * 5), ("fd", ctypes.c_int32)]


GET_LINE = (3 << 30) | (ctypes.sizeof(LineRequest) << 16) | (0xB4 << 8) | 0x07
SET_VALUES = (3 << 30) | (16 << 16) | (0xB4 << 8) | 0x0F
EVENT = struct.Struct("QIIII24x")  # timestamp_ns, id (1 rising, 2 falling), offset, seqno, line_seqno


def bench_cdev(chip: int, button: int, led: int, presses: int) -> None:
    request = LineRequest()
    request.offsets[0], request.offsets[1] = button, led
    request.consumer = b"svoyak-bench"
    request.num_lines = 2
    request.config.flags = LINE_FLAG_INPUT | LINE_FLAG_EDGE_RISING | LINE_FLAG_EDGE_FALLING
    request.config.num_attrs = 1
    request.config.attrs[0].attr.id = ATTR_ID_FLAGS
    request.config.attrs[0].attr.value = LINE_FLAG_OUTPUT
    request.config.attrs[0].mask = 1 << 1  # the request's second line, the LED
    chip_fd = os.open(f"/dev/gpiochip{chip}", os.O_RDWR)
    try:
        fcntl.ioctl(chip_fd, GET_LINE, request)
    finally:
        os.close(chip_fd)
    fd = request.fd
    rising = [0]
    orders = []

    def reader():
        while rising[0] < presses:
            data = os.read(fd, EVENT.size * 16)
            for offset in range(0, len(data), EVENT.size):
                _, kind, line, seqno, line_seqno = EVENT.unpack_from(data, offset)
                level = 1 if kind == 1 else 0
                fcntl.ioctl(fd, SET_VALUES, struct.pack("QQ", level << 1, 1 << 1))
                orders.append((seqno, line_seqno))
                rising[0] += level

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    say("bench cdev ready")
    wait_edges(rising, presses, 120)
    time.sleep(0.3)
    os.close(fd)
    say(f"bench cdev seqnos={orders}")


def latencies(consumer: str, led_global: int, since_s: float) -> list[float]:
    """irq_handler_entry (name=consumer) -> the next gpio_value led_global set 1, in µs, after ``since_s``."""
    pending, found = None, []
    for line in open(TRACE):
        match = re.search(r" (\d+\.\d+): (?:irq_handler_entry: irq=\d+ name=(\S+)|gpio_value: (\d+) set 1)", line)
        if not match or float(match.group(1)) < since_s:
            continue
        stamp = float(match.group(1))
        if match.group(2) == consumer:
            pending = stamp  # the latest edge before the write: the rising edge the LED answers
        elif match.group(3) and int(match.group(3)) == led_global and pending is not None:
            found.append(round((stamp - pending) * 1e6, 1))
            pending = None
    return found


def main() -> None:
    label, button, led, presses = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    chip = find_chip(label)
    led_global = chip_base(chip) + led
    for method, run, consumer in (("lgpio", bench_lgpio, "lg"), ("cdev", bench_cdev, "svoyak-bench")):
        since = time.clock_gettime(time.CLOCK_MONOTONIC)
        run(chip, button, led, presses)
        # rising edges only: the LED goes high on the press
        say(f"bench {method} irq_to_led_us={latencies(consumer, led_global, since)}")
    say("bench done")


if __name__ == "__main__":
    main()
