"""The hub's copy of every station's battles: each event applied once and in order (pure: no I/O, no clock).

JetStream drops a resend inside the stream's duplicate window (``Nats-Msg-Id``); anything older (a station that
lost its stream and republished its whole log) reaches the hub again, and the ledger drops it by sequence number.
An event that arrives ahead of a missing one waits until the gap fills.

>>> from appliance.rules.battle import BattleSetUp, ThemeStarted, event_to_dict

>>> from appliance.service.presets import load_profile
>>> ledger = Ledger()
>>> setup = event_to_dict(BattleSetUp(at_ns=0, profile=load_profile("mubc"), players=("А", "Б"), themes=1))
>>> theme = event_to_dict(ThemeStarted(at_ns=5, name="Реки"))
>>> [seq for seq, _ in ledger.take("room2", "b1", 2, theme)], [seq for seq, _ in ledger.take("room2", "b1", 1, setup)]
([], [1, 2])
>>> ledger.take("room2", "b1", 2, theme), ledger.duplicates
([], 1)
"""

from __future__ import annotations

import dataclasses

from appliance.errors import RulesError
from appliance.rules.battle import apply, event_from_dict

MAX_WAITING = 10_000  # events held ahead of a gap, per battle (bounded: a station's log is never that far off)


@dataclasses.dataclass
class Replica:
    box: str
    battle: str
    state: object = None
    seq: int = 0
    waiting: dict = dataclasses.field(default_factory=dict)
    broken: str = ""


class Ledger:
    def __init__(self) -> None:
        self.replicas: dict[tuple[str, str], Replica] = {}
        self.duplicates = 0
        self.applied = 0

    def take(self, box: str, battle: str, seq: int, event: dict) -> list[tuple[int, object]]:
        """Offer event ``seq`` of ``box``'s ``battle``; return the ``(seq, event)`` now applied, in order."""
        replica = self.replicas.setdefault((box, battle), Replica(box, battle))
        if seq <= replica.seq or seq in replica.waiting:
            self.duplicates += 1
            return []
        if len(replica.waiting) < MAX_WAITING:
            replica.waiting[seq] = event
        applied = []
        while replica.seq + 1 in replica.waiting and not replica.broken:
            raw = replica.waiting.pop(replica.seq + 1)
            try:
                parsed = event_from_dict(raw)
                replica.state = apply(replica.state, parsed)
            except (RulesError, ValueError, TypeError, KeyError) as error:
                # The station accepted it, so this is a version mismatch or a damaged message: shown, not hidden.
                replica.broken = f"event {replica.seq + 1}: {error}"
                break
            replica.seq += 1
            self.applied += 1
            applied.append((replica.seq, parsed))
        return applied

    def of_box(self, box: str) -> list[Replica]:
        return [replica for (owner, _battle), replica in self.replicas.items() if owner == box]

    def confirmed(self, box: str) -> dict[str, int]:
        """``{battle: seq}``: what the hub holds of each of ``box``'s battles without a gap."""
        return {replica.battle: replica.seq for replica in self.of_box(box)}
