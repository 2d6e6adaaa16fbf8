"""The pin backend seam: gpiozero pin factories whose ticks are CLOCK_MONOTONIC integer nanoseconds.

gpiozero calls ``pin.when_changed(ticks, state)`` on every edge; ticks are opaque values that devices compare only
through ``factory.ticks_diff``. Each factory below makes its ticks **``time.monotonic_ns()``-compatible
integers**, so an edge's ticks *are* its ``t_ns`` (docs/capture-protocol.md, *Timestamps*):

- ``lgpio`` (default): lgpio hands its callback the kernel's edge timestamp (``gpio_v2_line_event.timestamp_ns``,
  CLOCK_MONOTONIC, integer ns); gpiozero's ``LGPIOPin`` would divide it into float seconds, so
  :func:`_lgpio_classes` passes the integer through unchanged. Precision ``kernel``.
- ``rpigpio`` (fallback for older Pis): RPi.GPIO gives no timestamp; the pin asks ``factory.ticks()`` in the
  callback thread, which here is ``time.monotonic_ns()``. Precision ``callback``; a :class:`DegradedModeWarning`.
- ``mock``: :class:`TimedMockFactory` / :class:`TimedMockPin`; tests drive edges with explicit timestamps
  (``pin.drive_low(t_ns=...)``), the simulator with ``time.monotonic_ns()``. Precision ``mock``.

>>> backend = open_backend("mock")
>>> pin = backend.factory.pin(17)
>>> pin.function = "input"; pin.pull = "up"
>>> seen = []
>>> def changed(ticks, state): seen.append((ticks, state))
>>> pin.when_changed = changed  # gpiozero keeps a weak reference: keep the function alive
>>> pin.drive_low(t_ns=1_000_000_001)
>>> seen
[(1000000001, False)]
>>> backend.close()
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import os
import struct
import time
import warnings
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPin
from gpiozero.pins.pi import PiPin

from appliance.errors import CaptureError, DegradedModeWarning

PRECISION = {"lgpio": "kernel", "rpigpio": "callback", "mock": "mock"}
RPIGPIO_DEGRADED = "rpigpio: presses are stamped in the callback thread, not by the kernel (0.1-1 ms, worse under load)"


class PinFactoryUnavailable(CaptureError, RuntimeError):
    """No usable pin factory: no GPIO chip, a missing library, or no permission on /dev/gpiochip*."""


def _ns_ticks_diff(later: int, earlier: int) -> float:
    """gpiozero's contract: the seconds between two ticks values."""
    return (later - earlier) / 1_000_000_000


class TimedMockPin(MockPin):
    """A mock pin whose edges carry integer-nanosecond ticks: explicit (tests) or ``time.monotonic_ns()``."""

    def __init__(self, factory, info):
        self._edge_ns = 0
        super().__init__(factory, info)

    def drive_low(self, t_ns: int | None = None) -> None:
        """Drive the input low (a press, for an active-low button) as if at ``t_ns`` (default: now)."""
        self._edge_ns = time.monotonic_ns() if t_ns is None else int(t_ns)
        super().drive_low()

    def drive_high(self, t_ns: int | None = None) -> None:
        """Drive the input high (a release) as if at ``t_ns`` (default: now)."""
        self._edge_ns = time.monotonic_ns() if t_ns is None else int(t_ns)
        super().drive_high()

    def _call_when_changed(self):
        PiPin._call_when_changed(self, self._edge_ns, self._state)


class JumperedMockPin(TimedMockPin):
    """A mock output pin wired to a mock input pin, like the hwcheck jumper: each level it is set to drives the
    input at once, stamped with ``time.monotonic_ns()`` taken when the output changed."""

    def __init__(self, factory, info, input_pin=None):
        super().__init__(factory, info)
        self.input_pin = input_pin

    def _change_state(self, value):
        changed = super()._change_state(value)
        if changed and self._function == "output" and self.input_pin is not None:
            if value:
                self.input_pin.drive_high()
            else:
                self.input_pin.drive_low()
        return changed


class TimedMockFactory(MockFactory):
    """gpiozero's MockFactory with :class:`TimedMockPin` pins and ``time.monotonic_ns()`` ticks."""

    def __init__(self, revision=None):
        super().__init__(revision=revision, pin_class=TimedMockPin)

    ticks = staticmethod(time.monotonic_ns)
    ticks_diff = staticmethod(_ns_ticks_diff)


def kernel_event_clock(release: str) -> str:
    """The clock the GPIO character device stamps edges with on kernel ``release`` (``os.uname().release``).

    CLOCK_MONOTONIC since Linux 5.7 (commit "gpio: Switch timestamps to ktime_get_ns()"), CLOCK_REALTIME before.

    >>> kernel_event_clock("6.6.51+rpt-rpi-v8"), kernel_event_clock("5.4.83-v7l+")
    ('monotonic', 'realtime')
    """
    try:
        major, minor = (int(part) for part in release.split(".")[:2])
    except ValueError:
        return "monotonic"  # an unparseable release is a modern custom kernel; lgpio needs >= 5.10 anyway
    return "monotonic" if (major, minor) >= (5, 7) else "realtime"


REALTIME_DEGRADED = ("kernel older than 5.7 stamps GPIO edges with CLOCK_REALTIME: converted to CLOCK_MONOTONIC "
                     "with the offset read in the callback (exact unless the clock is stepped in between)")


# The GPIO controller that drives the 40-pin header, by its label (the GPIO character device's chip label), on
# each Pi the box runs on. Never by number: on a Pi 5 the header's chip moved from gpiochip4 to gpiochip0 in
# Raspberry Pi OS's kernel 6.6.47, and Debian's and Raspberry Pi OS's kernels number the chips differently.
HEADER_CHIP_LABELS = (
    "pinctrl-bcm2835",  # Pi Zero, 1, 2, 3 (upstream and Raspberry Pi OS kernels)
    "pinctrl-bcm2711",  # Pi 4, 400, CM4
    "pinctrl-rp1",      # Pi 5: the RP1 south bridge (Raspberry Pi OS kernel; mainline from 6.17)
)
# struct gpiochip_info {char name[32]; char label[32]; __u32 lines;} and GPIO_GET_CHIPINFO_IOCTL (linux/gpio.h)
_CHIPINFO = struct.Struct("32s32sI")
_GPIO_GET_CHIPINFO_IOCTL = (2 << 30) | (_CHIPINFO.size << 16) | (0xB4 << 8) | 0x01


def read_chip_label(path: str) -> str:
    """The label of the GPIO chip character device ``path`` (GPIO_GET_CHIPINFO_IOCTL, as ``gpiodetect`` does)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        info = fcntl.ioctl(fd, _GPIO_GET_CHIPINFO_IOCTL, bytes(_CHIPINFO.size))
    finally:
        os.close(fd)
    _, label, _ = _CHIPINFO.unpack(info)
    return label.split(b"\0", 1)[0].decode("ascii", "replace")


def find_header_chip(wanted: str = "", *, dev: Path = Path("/dev"), read_label=read_chip_label) -> int:
    """The number N of ``/dev/gpiochipN`` whose label is ``wanted``, or (``wanted`` empty) one of
    :data:`HEADER_CHIP_LABELS`. Raises :class:`PinFactoryUnavailable` listing every chip and label seen."""
    labels = (wanted,) if wanted else HEADER_CHIP_LABELS
    seen = []
    paths = sorted(dev.glob("gpiochip[0-9]*"), key=lambda path: int(path.name[len("gpiochip"):]))
    for path in paths:
        try:
            label = read_label(str(path))
        except OSError as error:
            seen.append(f"{path.name}: {error.strerror or error}")
            continue
        seen.append(f"{path.name} {label!r}")
        if label in labels:
            return int(path.name[len("gpiochip"):])
    raise PinFactoryUnavailable(
        f"no GPIO chip labelled {' or '.join(map(repr, labels))} (found: {', '.join(seen) or f'no {dev}/gpiochip*'}); "
        f"set gpio_chip to the label of the header's chip (gpiodetect lists them)")


# gpiozero reads the Pi's revision code from /proc/device-tree/system/linux,revision (which Raspberry Pi OS's
# firmware and kernel provide) or the "Revision" line of /proc/cpuinfo (32-bit Raspberry Pi OS kernels). A
# mainline kernel on its own device tree, as Debian's image boots, may have neither; its tree's /model names
# the board. A representative revision of that model gives gpiozero the right header (every model here has
# the same 40-pin header).
MODEL_REVISIONS = (  # longest prefix first
    ("Raspberry Pi 3 Model B Plus", 0xA020D3), ("Raspberry Pi 3 Model A Plus", 0x9020E0),
    ("Raspberry Pi 3 Model B", 0xA02082), ("Raspberry Pi Zero 2 W", 0x902120),
    ("Raspberry Pi Compute Module 4", 0xB03140), ("Raspberry Pi 400", 0xC03130),
    ("Raspberry Pi 4 Model B", 0xB03114), ("Raspberry Pi 5", 0xC04170),
)


def revision_from_model(model: str) -> int | None:
    """The revision code gpiozero gets for the board whose device tree /model is ``model``, or None.

    >>> hex(revision_from_model("Raspberry Pi 3 Model B Plus Rev 1.3"))
    '0xa020d3'
    >>> revision_from_model("linux,dummy-virt") is None
    True
    """
    for prefix, revision in MODEL_REVISIONS:
        if model.startswith(prefix):
            return revision
    return None


def read_revision(gpiozero_revision, model_path: Path = Path("/proc/device-tree/model")) -> int:
    """gpiozero's revision lookup, then the board's model (:func:`revision_from_model`)."""
    try:
        return gpiozero_revision()
    except Exception as error:  # gpiozero's PinUnknownPi: neither place holds a revision
        try:
            model = model_path.read_bytes().rstrip(b"\0").decode("ascii", "replace")
        except OSError:
            raise error from None
        revision = revision_from_model(model)
        if revision is None:
            raise PinFactoryUnavailable(f"{error}; the device tree's model {model!r} is no Raspberry Pi this "
                                        f"box knows") from None
        return revision


@functools.cache
def _lgpio_classes():
    """Build the lgpio factory and pin lazily: ``import lgpio`` needs the C library and makes a FIFO in the cwd."""
    from gpiozero.pins.lgpio import LGPIOFactory, LGPIOPin
    from gpiozero.pins.local import LocalPiPin

    class KernelTimestampPin(LGPIOPin):
        """An lgpio pin that hands on lgpio's integer CLOCK_MONOTONIC nanoseconds instead of float seconds."""

        def _call_when_changed(self, chip, gpio, level, ticks):
            # lgpio: ticks = the kernel's edge timestamp_ns (CLOCK_MONOTONIC since 5.7). gpiozero's LGPIOPin
            # would pass ticks / 1e9; we keep the integer so no rounding ever touches a press's timestamp.
            if self.factory.realtime_events:
                ticks -= time.time_ns() - time.monotonic_ns()
            LocalPiPin._call_when_changed(self, int(ticks), level)

    class KernelTimestampFactory(LGPIOFactory):
        def __init__(self, chip=None):
            super().__init__(chip)
            self.pin_class = KernelTimestampPin
            self.realtime_events = kernel_event_clock(os.uname().release) == "realtime"

        ticks = staticmethod(time.monotonic_ns)
        ticks_diff = staticmethod(_ns_ticks_diff)

        def _get_revision(self):
            return read_revision(super()._get_revision)

    return KernelTimestampFactory, KernelTimestampPin


@functools.cache
def _rpigpio_factory_class():
    from gpiozero.pins.rpigpio import RPiGPIOFactory

    class CallbackTimestampFactory(RPiGPIOFactory):
        """RPi.GPIO, whose pins stamp edges with ``factory.ticks()`` in the callback: here monotonic ns."""

        ticks = staticmethod(time.monotonic_ns)
        ticks_diff = staticmethod(_ns_ticks_diff)

    return CallbackTimestampFactory


@dataclasses.dataclass
class Backend:
    """An open pin factory with what the status event says about it."""

    factory: object
    name: str  # lgpio | rpigpio | mock
    precision: str  # kernel | callback | mock
    degraded: list = dataclasses.field(default_factory=list)

    @property
    def is_mock(self) -> bool:
        return self.name == "mock"

    def close(self) -> None:
        self.factory.close()


def prepare_lgpio_workdir(fallbacks: list[Path]) -> Path:
    """Make the working directory writable before lgpio is imported: it creates its notification FIFO
    ``.lgd-nfy<N>`` there. Keeps the current directory if writable, else changes to the first writable of
    ``fallbacks`` ($RUNTIME_DIRECTORY, $STATE_DIRECTORY, the socket's directory). Returns the directory used."""
    current = Path.cwd()
    if os.access(current, os.W_OK):
        return current
    for directory in fallbacks:
        if directory and Path(directory).is_dir() and os.access(directory, os.W_OK):
            os.chdir(directory)
            return Path(directory)
    raise PinFactoryUnavailable(
        f"lgpio needs a writable working directory for its notification FIFO; {current} is not writable and "
        f"none of {', '.join(map(str, fallbacks)) or 'no fallbacks'} is (set RuntimeDirectory= in the unit)")


def open_backend(name: str, chip_label: str = "") -> Backend:
    """Open the pin factory ``name`` (lgpio, rpigpio or mock), falling back from lgpio to rpigpio.

    lgpio opens the chip :func:`find_header_chip` finds by ``chip_label`` (empty: the Pi's header chip).

    The fallback and rpigpio itself emit a :class:`DegradedModeWarning` and list the reason in
    ``Backend.degraded``. Raises :class:`PinFactoryUnavailable` naming every reason when nothing works, and
    ``ValueError`` for an unknown name (config.py validates it first).
    """
    if name == "mock":
        return Backend(TimedMockFactory(), "mock", PRECISION["mock"])
    if name not in ("lgpio", "rpigpio"):
        raise ValueError(f"unknown pin factory {name!r}")
    reasons = []
    if name == "lgpio":
        try:
            factory_class, _ = _lgpio_classes()
            factory = factory_class(chip=find_header_chip(chip_label))
            degraded = [REALTIME_DEGRADED] if factory.realtime_events else []
            for reason in degraded:
                warnings.warn(DegradedModeWarning(reason), stacklevel=2)
            return Backend(factory, "lgpio", PRECISION["lgpio"], degraded)
        except Exception as error:  # ImportError, OSError, lgpio.error, gpiozero's BadPinFactory: all mean "no lgpio"
            reasons.append(f"lgpio: {type(error).__name__}: {error}")
    try:
        factory = _rpigpio_factory_class()()
    except Exception as error:  # same: any failure to open the fallback is reported with the first reason
        reasons.append(f"rpigpio: {type(error).__name__}: {error}")
        hint = "on a laptop (no GPIO) add --simulator"
        if any("/proc/cpuinfo" in reason or "device-tree" in reason for reason in reasons):
            # gpiozero reads the Pi's revision from /proc/device-tree or /proc/cpuinfo when the factory opens.
            hint = "gpiozero cannot read the Pi's revision: does the unit hide /proc (ProcSubset=pid)?"
        raise PinFactoryUnavailable("no GPIO pin factory works (" + "; ".join(reasons) + f"); {hint}") from None
    degraded = [*(f"fell back from {reason}" for reason in reasons), RPIGPIO_DEGRADED]
    for reason in degraded:
        warnings.warn(DegradedModeWarning(reason), stacklevel=2)
    return Backend(factory, "rpigpio", PRECISION["rpigpio"], degraded)
