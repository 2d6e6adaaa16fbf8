"""The arbiter: which press wins. Pure logic: edges and commands in, LED states, beeps and events out.

No pins, threads or clocks here: every edge arrives with its timestamp (CLOCK_MONOTONIC ns, from the kernel on
lgpio) and the time it reached us, and every command with the time it was received. The caller
(:mod:`gpio.capture`) holds a lock around each call and applies the returned :class:`Outcome` to the hardware.

Rules (docs/capture-protocol.md is the contract):

- Among eligible presses of an armed round, the **earliest timestamp** wins, whatever order the edges arrive
  in. The first eligible arrival lights at once; a later arrival with an earlier timestamp takes the win
  (``lockout`` with ``corrects``). "Fair by timestamp, not by arrival" (design principle 4).
- Equal timestamps are a tie: the first to arrive keeps the win, both are flagged ``tie``.
- Later eligible presses are ``counted`` with their rank and gap from the winner: the order of the next
  answerers after a wrong answer (eurocup 2.9, youth-cup 9, northern-owl 3.9).
- A press is the first falling edge after the button was quiet for ``debounce_ns``; chatter is ignored and
  never moves a timestamp. A button held when a round is armed is ``stuck`` until released.

>>> arbiter = Arbiter(players=3, debounce_ns=20_000_000, precision="mock")
>>> _ = arbiter.arm({1, 2, 3}, "q1", now_ns=1_000, mode="linked")
>>> late = arbiter.edge(2, t_ns=5_000_002, pressed=True, arrival_ns=5_100_000)
>>> [e["status"] for e in late.events if e["event"] == "press"], late.leds
(['won'], (False, True, False))
>>> early = arbiter.edge(1, t_ns=5_000_001, pressed=True, arrival_ns=5_100_100)
>>> [(e["event"], e.get("winner"), e.get("corrects")) for e in early.events]
[('press', None, None), ('lockout', 1, 2)]
>>> early.leds
(True, False, False)
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

PRESS_STATUSES = ("won", "counted", "repeat", "ineligible", "disarmed", "stuck", "test")
MODES = ("linked", "standalone", "button-test")


@dataclasses.dataclass
class Outcome:
    """What one call decided: events to publish (in order), the LED states to show (``None``: unchanged), and
    whether to sound the buzzer now."""

    events: list = dataclasses.field(default_factory=list)
    leds: tuple | None = None
    beep: bool = False


@dataclasses.dataclass
class _Input:
    held: bool = False
    last_edge_ns: int | None = None
    bounces: int = 0


@dataclasses.dataclass
class _Ranked:
    player: int
    t_ns: int
    arrival: int  # arrival order within the round: breaks ties (first to arrive keeps the win)


class Arbiter:
    """The lockout state machine for ``players`` buttons (numbered from 1).

    Not thread-safe: the caller serialises calls. Every method returns an :class:`Outcome`.
    Raises ``ValueError`` for a player number outside 1..players (a bug in the caller, never a user error:
    the protocol layer validates commands before they get here).
    """

    def __init__(self, players: int, debounce_ns: int, precision: str):
        if not 1 <= players <= 8:
            raise ValueError(f"players must be 1-8, not {players}")
        self.players = players
        self.debounce_ns = debounce_ns
        self.precision = precision
        self.inputs = [_Input() for _ in range(players)]
        self.leds = (False,) * players
        self.mode = "standalone"
        self.button_test = False
        self.round_id: str | None = None
        self.armed = False
        self.armed_at_ns: int | None = None
        self.eligible: frozenset = frozenset()
        self.stuck: set = set()
        self._ranked: list[_Ranked] = []
        self._pressed: set = set()
        self._arrivals = 0

    # ------------------------------------------------------------------ queries
    @property
    def winner(self) -> int | None:
        return self._ranked[0].player if self._ranked else None

    def held(self) -> list[int]:
        return [player for player in range(1, self.players + 1) if self.inputs[player - 1].held]

    def snapshot(self) -> dict:
        """The arbiter's part of a ``status`` event."""
        return {
            "mode": "button-test" if self.button_test else self.mode,
            "players": self.players,
            "armed": self.armed,
            "round_id": self.round_id,
            "eligible": sorted(self.eligible),
            "armed_at_ns": self.armed_at_ns,
            "winner": self.winner,
            "leds": list(self.leds),
            "held": self.held(),
            "stuck": sorted(self.stuck),
            "bounces": [state.bounces for state in self.inputs],
        }

    # ------------------------------------------------------------------ commands
    def arm(self, eligible: Iterable[int], round_id: str, now_ns: int, mode: str,
            held: Iterable[int] = ()) -> Outcome:
        """Start round ``round_id`` at ``now_ns``: LEDs off; ``eligible`` players compete.

        ``held`` names buttons the caller read as down right now (the arbiter also knows those whose last edge
        was a press); those among the eligible are ``stuck`` (a ``fault`` each) until released.
        """
        eligible = frozenset(eligible)
        self._check_players(eligible)
        if mode not in ("linked", "standalone"):
            raise ValueError(f"mode must be linked or standalone, not {mode!r}")
        for player in held:
            self._check_players((player,))
            self.inputs[player - 1].held = True
        self.mode = mode
        self.button_test = False
        self.round_id, self.armed, self.armed_at_ns, self.eligible = round_id, True, now_ns, eligible
        self._ranked, self._pressed, self._arrivals = [], set(), 0
        self.stuck = {player for player in eligible if self.inputs[player - 1].held}
        outcome = Outcome(leds=self._set_leds(()))
        for player in sorted(self.stuck):
            outcome.events.append(self._fault("stuck", player, "button held down when the round was armed"))
        return outcome

    def disarm(self) -> Outcome:
        """Stop judging: later presses are ``disarmed``. LEDs stay."""
        self.armed = False
        return Outcome()

    def reset(self) -> Outcome:
        """LEDs off, disarmed, button-test off."""
        self.armed = False
        self.button_test = False
        return Outcome(leds=self._set_leds(()))

    def set_led(self, player: int, on: bool) -> Outcome:
        self._check_players((player,))
        leds = list(self.leds)
        leds[player - 1] = bool(on)
        self.leds = tuple(leds)
        return Outcome(leds=self.leds)

    def set_button_test(self, on: bool) -> Outcome:
        """Button-test mode: each press lights its own LED while held. Entering or leaving it disarms."""
        self.button_test = bool(on)
        self.armed = False
        return Outcome(leds=self._set_leds(self.held() if on else ()))

    def set_mode(self, mode: str) -> None:
        """Record who is in charge (``linked`` while an appliance is connected, else ``standalone``)."""
        if mode not in ("linked", "standalone"):
            raise ValueError(f"mode must be linked or standalone, not {mode!r}")
        self.mode = mode

    # ------------------------------------------------------------------ edges
    def edge(self, player: int, t_ns: int, pressed: bool, arrival_ns: int) -> Outcome:
        """One edge of ``player``'s button: ``pressed`` True for the falling (press) edge, stamped ``t_ns``."""
        self._check_players((player,))
        state = self.inputs[player - 1]
        quiet = state.last_edge_ns is None or t_ns - state.last_edge_ns >= self.debounce_ns
        was_held = state.held
        state.held = pressed
        if not pressed:
            state.last_edge_ns = t_ns if state.last_edge_ns is None else max(state.last_edge_ns, t_ns)
            outcome = Outcome()
            if self.button_test and self.leds[player - 1]:
                outcome.leds = self._led(player, False)
            if player in self.stuck:
                self.stuck.discard(player)
                outcome.events.append(self._fault("stuck-cleared", player, "button released"))
            return outcome
        if was_held or not quiet:
            # Chatter: a press edge too soon after the last edge, or a second press edge without a release.
            # Ignored, and it does not move the timestamp of the press it belongs to.
            state.bounces += 1
            state.last_edge_ns = max(state.last_edge_ns or t_ns, t_ns)
            return Outcome()
        state.last_edge_ns = t_ns
        return self._press(player, t_ns, arrival_ns)

    def _press(self, player: int, t_ns: int, arrival_ns: int) -> Outcome:
        if self.button_test:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "test")],
                           leds=self._led(player, True), beep=True)
        if not self.armed or self.armed_at_ns is None or t_ns < self.armed_at_ns:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "disarmed")])
        if player in self.stuck:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "stuck")])
        if player not in self.eligible:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "ineligible")])
        if player in self._pressed:
            return Outcome(events=[self._press_event(player, t_ns, arrival_ns, "repeat")])
        self._pressed.add(player)
        previous = self.winner
        entry = _Ranked(player, t_ns, self._arrivals)
        self._arrivals += 1
        self._ranked.append(entry)
        self._ranked.sort(key=lambda r: (r.t_ns, r.arrival))
        rank = self._ranked.index(entry) + 1
        winner = self._ranked[0]
        tie = t_ns == winner.t_ns and any(r is not entry and r.t_ns == t_ns for r in self._ranked)
        status = "won" if rank == 1 else "counted"
        press = self._press_event(player, t_ns, arrival_ns, status, rank=rank, gap_ns=t_ns - winner.t_ns, tie=tie)
        outcome = Outcome(events=[press])
        if previous is None:
            outcome.leds = self._set_leds((player,))
            outcome.beep = True
            outcome.events.append(self._lockout(corrects=None))
        elif winner.player != previous:
            # An earlier-stamped edge arrived after the decision: the timestamp wins, the LEDs follow.
            outcome.leds = self._set_leds((winner.player,))
            outcome.events.append(self._lockout(corrects=previous))
        elif tie:
            outcome.events.append(self._lockout(corrects=None))
        return outcome

    # ------------------------------------------------------------------ helpers
    def _check_players(self, players: Iterable[int]) -> None:
        for player in players:
            if not isinstance(player, int) or isinstance(player, bool) or not 1 <= player <= self.players:
                raise ValueError(f"player {player!r} is outside 1-{self.players}")

    def _set_leds(self, lit: Iterable[int]) -> tuple:
        lit = set(lit)
        self.leds = tuple(player in lit for player in range(1, self.players + 1))
        return self.leds

    def _led(self, player: int, on: bool) -> tuple:
        leds = list(self.leds)
        leds[player - 1] = on
        self.leds = tuple(leds)
        return self.leds

    def _press_event(self, player: int, t_ns: int, arrival_ns: int, status: str, *, rank: int | None = None,
                     gap_ns: int | None = None, tie: bool = False) -> dict:
        if gap_ns is None and status not in ("test",) and self._ranked and self.armed:
            gap_ns = t_ns - self._ranked[0].t_ns
        return {
            "event": "press", "player": player, "t_ns": t_ns, "arrival_ns": arrival_ns, "status": status,
            "round_id": self.round_id, "rank": rank, "gap_ns": gap_ns, "tie": tie,
            "precision": self.precision, "mode": "button-test" if self.button_test else self.mode,
        }

    def _lockout(self, corrects: int | None) -> dict:
        winner = self._ranked[0]
        tied = [r.player for r in self._ranked[1:] if r.t_ns == winner.t_ns]
        return {
            "event": "lockout", "round_id": self.round_id, "winner": winner.player, "t_ns": winner.t_ns,
            "armed_at_ns": self.armed_at_ns, "tie": bool(tied), "tied_with": tied, "corrects": corrects,
            "order": [{"player": r.player, "t_ns": r.t_ns, "gap_ns": r.t_ns - winner.t_ns} for r in self._ranked],
            "mode": self.mode,
        }

    def _fault(self, kind: str, player: int | None, detail: str) -> dict:
        return {"event": "fault", "kind": kind, "player": player, "detail": detail}
