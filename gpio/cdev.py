"""Every button in ONE GPIO character-device (v2 uAPI) line request: one total order of presses, from the kernel.

With a pin factory (gpiozero over lgpio) each button is its own line request and lgpio's alert thread hands the
edges on one line at a time, so two presses microseconds apart may reach the arbiter in either order (it then
corrects the win by timestamp, docs/capture-protocol.md). Here the player buttons and the host reset button are
requested together (``GPIO_V2_GET_LINE_IOCTL`` with every offset, through libgpiod v2's Python bindings, the
``gpiod`` package): the kernel puts every edge of every button into that request's one event queue, each with
its CLOCK_MONOTONIC ``timestamp_ns`` (taken in the edge's interrupt) and a ``global_seqno`` counting the
request's events. One thread reads the queue with no polling delay, sorts each batch by (timestamp, seqno) and
hands the edges on in that order, so the arbiter sees presses in the order the kernel stamped them; a gap in the
sequence numbers (the kernel's queue overflowed) is reported as a fault, never hidden.

The LEDs and the buzzer stay gpiozero devices on the pin factory (outputs on other lines of the same chip), and
the pin factory's own buttons remain the fallback (setting ``button_reader``: ``factory`` or ``cdev``).

Tested with a fake request (tests/gpio/test_cdev.py); ``GpiodRequest`` is the real one.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from pathlib import Path
from typing import Callable, Protocol

from appliance.errors import CaptureError

log = logging.getLogger(__name__)

CONSUMER = "svoyak-buttons"
# How many events one read takes from the kernel's queue (its default depth is 16 per line requested).
READ_BATCH = 64


class CdevUnavailable(CaptureError, RuntimeError):
    """The buttons' line request could not be made (no gpiod package, busy lines, no permission)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Edge:
    """One edge as the kernel reported it (struct gpio_v2_line_event)."""

    offset: int          # the line on the chip (the BCM number on a Pi's header chip)
    rising: bool         # GPIO_V2_LINE_EVENT_RISING_EDGE (the physical level went high)
    timestamp_ns: int    # CLOCK_MONOTONIC, taken in the edge's interrupt
    global_seqno: int    # this request's event count, across all its lines, from 1
    line_seqno: int      # the same for this line alone


class LineRequest(Protocol):
    """What the reader needs of a v2 line request: blocking wait, batch read, current levels, release."""

    def wait(self, timeout_s: float) -> bool: ...
    def read(self, max_events: int) -> list[Edge]: ...
    def levels(self) -> dict[int, int]: ...
    def release(self) -> None: ...


def order(events: list[Edge]) -> list[Edge]:
    """The total order of one batch: by the kernel's timestamp, then its sequence number (equal timestamps)."""
    return sorted(events, key=lambda edge: (edge.timestamp_ns, edge.global_seqno))


class CdevButtons:
    """The box's buttons on one line request; edges to ``on_player_edge(player, t_ns, pressed)`` and
    ``on_reset_edge(t_ns, pressed)`` in the kernel's order, from one reader thread.

    ``player_offsets``: the lines of players 1..n; ``reset_offset``: the host reset button's line.
    ``on_fault(detail)``: lost edges (a gap in the sequence numbers) or a read error.
    """

    def __init__(self, request: LineRequest, *, player_offsets, reset_offset: int, active_low: bool,
                 on_player_edge: Callable[[int, int, bool], None], on_reset_edge: Callable[[int, bool], None],
                 on_fault: Callable[[str], None] = lambda detail: None):
        self.request = request
        self.player_of = {offset: player for player, offset in enumerate(player_offsets, start=1)}
        self.reset_offset = reset_offset
        self.active_low = active_low
        self.on_player_edge = on_player_edge
        self.on_reset_edge = on_reset_edge
        self.on_fault = on_fault
        self.last_seqno = 0
        self.lost = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the order
    def dispatch(self, events: list[Edge]) -> None:
        """Hand one batch on in the kernel's total order; count and report a gap in the sequence numbers."""
        for edge in order(events):
            if self.last_seqno and edge.global_seqno > self.last_seqno + 1:
                missing = edge.global_seqno - self.last_seqno - 1
                self.lost += missing
                self.on_fault(f"the kernel's edge queue overflowed: {missing} edge(s) lost before "
                              f"#{edge.global_seqno} (line {edge.offset})")
            self.last_seqno = max(self.last_seqno, edge.global_seqno)
            pressed = edge.rising != self.active_low
            player = self.player_of.get(edge.offset)
            if player is not None:
                self.on_player_edge(player, edge.timestamp_ns, pressed)
            elif edge.offset == self.reset_offset:
                self.on_reset_edge(edge.timestamp_ns, pressed)

    def held_players(self) -> list[int]:
        levels = self.request.levels()
        pressed_level = 0 if self.active_low else 1
        return sorted(player for offset, player in self.player_of.items() if levels.get(offset) == pressed_level)

    # ------------------------------------------------------------------ the reader thread
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="capture-cdev", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self.request.wait(0.2):
                    continue
                events = self.request.read(READ_BATCH)
            except OSError as error:
                if self._stop.is_set():
                    return
                self.on_fault(f"reading the buttons' edges failed: {error}")
                self._stop.wait(0.1)
                continue
            if events:
                self.dispatch(events)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1)
        self.request.release()


class GpiodRequest:
    """A real v2 line request through libgpiod's Python bindings (``gpiod`` >= 2 on PyPI)."""

    def __init__(self, chip_path: str, offsets, *, active_low: bool):
        try:
            import gpiod
            from gpiod.line import Bias, Clock, Direction, Edge as LineEdge
        except ImportError as error:
            raise CdevUnavailable(f"the gpiod package (libgpiod v2 bindings) is not installed: {error}") from None
        self._gpiod = gpiod
        self._rising = gpiod.EdgeEvent.Type.RISING_EDGE
        settings = gpiod.LineSettings(direction=Direction.INPUT, edge_detection=LineEdge.BOTH,
                                      bias=Bias.PULL_UP if active_low else Bias.PULL_DOWN,
                                      event_clock=Clock.MONOTONIC)
        self.offsets = tuple(offsets)
        try:
            self._request = gpiod.request_lines(chip_path, consumer=CONSUMER, config={self.offsets: settings},
                                                event_buffer_size=READ_BATCH)
        except OSError as error:
            raise CdevUnavailable(f"cannot request lines {list(self.offsets)} of {chip_path}: "
                                  f"{error.strerror or error} (another capture service or hwcheck holds them?)") from None

    def wait(self, timeout_s: float) -> bool:
        return self._request.wait_edge_events(timeout_s)

    def read(self, max_events: int) -> list[Edge]:
        return [Edge(event.line_offset, event.event_type == self._rising, event.timestamp_ns, event.global_seqno,
                     event.line_seqno) for event in self._request.read_edge_events(max_events)]

    def levels(self) -> dict[int, int]:
        values = self._request.get_values(list(self.offsets))
        return {offset: int(value == self._gpiod.line.Value.ACTIVE) for offset, value in zip(self.offsets, values)}

    def release(self) -> None:
        self._request.release()


def open_buttons(chip_number: int, *, player_offsets, reset_offset: int, active_low: bool, on_player_edge,
                 on_reset_edge, on_fault, dev: Path = Path("/dev")) -> CdevButtons:
    """The buttons' one line request on ``/dev/gpiochip<chip_number>`` (found by its label, gpio/pins.py)."""
    request = GpiodRequest(str(dev / f"gpiochip{chip_number}"), [*player_offsets, reset_offset],
                           active_low=active_low)
    return CdevButtons(request, player_offsets=player_offsets, reset_offset=reset_offset, active_low=active_low,
                       on_player_edge=on_player_edge, on_reset_edge=on_reset_edge, on_fault=on_fault)
