"""Where the rooms meet the tournament desk: claims, a station's result entering by itself, conflicts.

A station's battle is linked by its slot (``tournament:<id>:<battle>``) and names its players as the desk
names them (:func:`player_names`, the same rule as «Играть на этом боксе»). Its result enters through the desk's
one way in, under the command id ``rooms:<box>:<battle>``, so a hub that replays its stream enters nothing twice.
A result already on the desk from elsewhere (typed by hand, or another box) is never overwritten: the pair is
kept as a conflict the director settles, in the box's event store (:mod:`.conflicts`), so a restart forgets
neither the question nor the answer.
"""

from __future__ import annotations

import threading

from appliance.rules import tournament as t
from appliance.rules.tournament.battle_driver import result_from_battle
from appliance.rules.tournament.errors import TournamentError
from appliance.service.rooms.conflicts import ConflictBook, ConflictError
from appliance.service.rooms.wire import CLAIM_REASONS, ClaimRefusedError, SlotTakenError
from appliance.service.tournaments import SLOT_PREFIX


def player_names(state, players) -> list[str]:
    names = [state.entrants[p].name for p in players]
    if len(set(names)) != len(names):
        names = [f"{name} ({p})" for name, p in zip(names, players)]
    return names


def parse_slot(slot: str) -> tuple[str, str] | None:
    if not slot.startswith(SLOT_PREFIX):
        return None
    tournament_id, _, battle_id = slot[len(SLOT_PREFIX):].partition(":")
    return (tournament_id, battle_id) if tournament_id and battle_id else None


class ResultEntry:
    def __init__(self, desk, station_names) -> None:
        """``desk()``: the box's TournamentDesk; ``station_names()``: ``{box_id: name}``."""
        self.desk = desk
        self.station_names = station_names
        self._lock = threading.Lock()
        self._book: ConflictBook | None = None
        self._book_lock = threading.Lock()
        self.refused: list[dict] = []
        self.entered = 0

    @property
    def book(self) -> ConflictBook:
        """The conflicts kept in the desk's store (read from it on first use: a hub that restarted shows them)."""
        with self._book_lock:  # one book: pages and the hub's loop may ask first at the same moment
            if self._book is None:
                self._book = ConflictBook(self.desk().store)
            return self._book

    @property
    def conflicts(self) -> dict[tuple[str, str], dict]:
        """The open conflicts: ``{(tournament, battle): {tournament, battle, box, box_battle, station, desk}}``."""
        return self.book.open()

    # --- claims ----------------------------------------------------------------------------------------------------
    def claim(self, box: str, tournament_id: str, battle_id: str, assign: bool = False, before=None) -> dict:
        """``box`` asks for the slot: ``{"ok": True}`` or ``{"ok": False, "holder"}`` / ``{"ok": False, "error"}``.

        A station's claim over NATS (``assign`` False) only confirms a slot the desk already gave ``box``: a battle
        given to nobody is refused ("not assigned to this box") and stays unassigned, so a station, hostile or
        wrong, cannot take a battle the director did not give it. The director's «Отдать бой станции»
        (:meth:`check_free`) assigns it (``assign`` True)."""
        desk = self.desk()
        with self._lock:
            try:
                state = desk.state(tournament_id)
            except LookupError:
                return {"ok": False, "error": "unknown tournament"}
            if battle_id not in state.battles:
                return {"ok": False, "error": "unknown battle"}
            if battle_id in state.results:
                return {"ok": False, "error": "the battle already has a result"}
            room, holder = state.assignments.get(battle_id, ("", ""))
            if holder and holder != box:
                names = self.station_names()
                return {"ok": False, "holder": names.get(holder, holder), "holder_id": holder}
            if holder != box and not assign:
                return {"ok": False, "error": "not assigned to this box"}
            if holder != box:
                if before is not None:  # what goes with the assignment (its themes), once the slot is free
                    before()
                desk.assign(tournament_id, battle_id, self.station_names().get(box, box), box)
        return {"ok": True}

    def check_free(self, box: str, tournament_id: str, battle_id: str, before=None) -> None:
        """The director gives the slot to ``box``: SlotTakenError / ClaimRefusedError, or it is assigned.
        ``before()`` runs first, once the slot is known to be free (its error leaves the slot unassigned)."""
        answer = self.claim(box, tournament_id, battle_id, assign=True, before=before)
        if not answer["ok"] and answer.get("holder"):
            raise SlotTakenError(f"battle {battle_id} is held by {answer['holder']}", answer["holder"])
        if not answer["ok"]:
            why = str(answer.get("error") or "")
            raise ClaimRefusedError(f"battle {battle_id}: {why}", CLAIM_REASONS.get(why, ""))

    # --- assignments -------------------------------------------------------------------------------------------------
    def assignments_for(self, box: str) -> list[dict]:
        """The battles assigned to ``box`` with no result yet, ready to start: players, profile, themes."""
        desk = self.desk()
        out = []
        for item in desk.list():
            state = desk.state(item["id"])
            for battle_id, (room, holder) in state.assignments.items():
                if holder != box or battle_id in state.results:
                    continue
                try:
                    setup = desk.battle_setup(item["id"], battle_id, at_ns=0)
                except TournamentError:
                    continue  # its players are not known yet
                spec = state.battles[battle_id]
                out.append({"tournament": item["id"], "title": state.title, "battle": battle_id,
                            "stage": spec.stage, "room": room, "profile": setup.profile.name,
                            "players": player_names(state, setup.players), "ids": list(setup.players),
                            "themes": [{"name": "", "red": i in setup.red_themes} for i in range(setup.themes)],
                            "cuts": None if setup.cuts is None else list(setup.cuts), "slot": setup.slot,
                            "run": setup.run, "runs": setup.runs})
        return out

    # --- results -----------------------------------------------------------------------------------------------------
    def result_of(self, box: str, battle: str, battle_state):
        linked = parse_slot(getattr(battle_state.setup, "slot", "") or "")
        if linked is None:
            return None
        tournament_id, battle_id = linked
        state = self.desk().state(tournament_id)
        players = t.battle_players(state, battle_id) or ()
        ids = dict(zip(player_names(state, players), players))
        return tournament_id, battle_id, result_from_battle(battle_state, battle_id, source="box",
                                                            log_id=f"{box}/{battle}", ids=ids)

    def enter(self, box: str, battle: str, battle_state) -> None:
        """A station's finished battle: its result enters the desk, or waits beside another as a conflict."""
        desk = self.desk()
        try:
            found = self.result_of(box, battle, battle_state)
        except (LookupError, TournamentError):
            return
        if found is None:
            return
        tournament_id, battle_id, result = found
        with self._lock:
            state = desk.state(tournament_id)
            existing = state.results.get(battle_id)
            if existing == result:
                return
            _room, holder = state.assignments.get(battle_id, ("", ""))
            if holder != box:  # a setup names its slot itself: only the box the desk gave the battle reports it
                self.refused.append({"tournament": tournament_id, "battle": battle_id, "box": box,
                                     "why": "not assigned to this box"})
                return
            if existing is not None and existing.log_id != result.log_id:
                if not self.book.kept_desk(tournament_id, battle_id, result.log_id):
                    self.book.hold(desk.clock(), tournament_id, battle_id, box, battle, result, existing)
                return
            try:
                desk.submit(tournament_id, t.BattleResultRecorded(desk.clock(), result),
                            command_id=f"rooms:{box}:{battle}")
                self.entered += 1
            except TournamentError as error:
                self.refused.append({"tournament": tournament_id, "battle": battle_id, "box": box,
                                     "why": str(error)})

    def settle(self, tournament_id: str, battle_id: str, take_station: bool) -> None:
        """The director's answer to a conflict: the station's result replaces the desk's, or is set aside.

        Raises :class:`~.conflicts.ConflictError` when no conflict is open for the battle (answered already).
        The station's result is recorded first, then the answer: a crash between the two asks again, and the
        second «keep the station's» finds the result already there (same command id)."""
        desk = self.desk()
        with self._lock:
            conflict = self.book.open().get((tournament_id, battle_id))
            if conflict is None:
                raise ConflictError(f"no open conflict for battle {battle_id}", code="no_conflict",
                                    params={"battle": battle_id})
            if take_station:  # refused by the desk (TournamentError): the conflict stays open, the page says why
                desk.submit(tournament_id, t.BattleResultRecorded(desk.clock(), conflict["station"]),
                            command_id=f"rooms:{conflict['box']}:{conflict['box_battle']}:settled")
            self.book.settle(desk.clock(), tournament_id, battle_id, take_station)
