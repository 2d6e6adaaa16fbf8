"""The rooms' wire format, version 1: subjects, stream names, message ids and bodies (docs/rooms.md).

Pure: no I/O. Every message body is UTF-8 JSON with ``"format": "svoyak-rooms"`` and ``"v": 1``.

>>> subject = event_subject("room2", "a1b2c3")
>>> subject, message_id("a1b2c3", 7)
('svoyak.box.room2.battle.a1b2c3', 'a1b2c3:7')
>>> body = encode_event("room2", "a1b2c3", 7, {"type": "ReadingStarted", "at_ns": 5})
>>> decode_event(subject, body)["seq"]
7
"""

from __future__ import annotations

import json
import re

from appliance.errors import SvoyakError

FORMAT = "svoyak-rooms"
VERSION = 1
HUB_DOMAIN = "hub"
DESK_STREAM = "DESK"
SUBJECT_ROOT = "svoyak"
BOX_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")   # a NATS token, a JetStream domain and a stream-name part
BATTLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
STAGES_HEADER = "Svoyak-Stages"  # optional, bench only: "<noted_ns> <published_ns>" on the station's clock
DUPLICATE_WINDOW_S = 600  # Nats-Msg-Id duplicates dropped by the stream for this long; the hub drops the rest


class RoomsError(SvoyakError):
    """Base for errors of the rooms link (pairing, roles, messages). ``code`` names the refusal's words for the
    pages (the catalogue's ``refusal.rooms.<code>``, docs/words.md), ``params`` fill them; the message is the log's."""

    code = ""

    def __init__(self, message: str = "", *, code: str = "", params: dict | None = None) -> None:
        super().__init__(message)
        if code:
            self.code = code
        self.params = dict(params or {})


# The refusals a hub answers a station's pairing with (its /rooms/pair JSON: code and params); the station words
# them in its own language (refusal.rooms.<code>), any other as hub_refused.
PAIRING_CODES = frozenset({"not_hub", "bad_code", "already_paired", "not_paired"})


class MessageError(RoomsError, ValueError):
    """A rooms message that is not version-1 JSON of the expected shape; it is counted and dropped."""


class PairingError(RoomsError, ValueError):
    """A pairing code that is wrong or stale, or a box id that is taken or malformed."""


class SlotTakenError(RoomsError, LookupError):
    """The slot is assigned to, or being played by, another box: ``holder`` names it."""

    code = "taken"

    def __init__(self, message: str, holder: str = "") -> None:
        super().__init__(message, params={"holder": holder})
        self.holder = holder


class NotAssignedError(RoomsError, LookupError):
    """A station asked to start a battle that is not among the desk's assignments to it (nothing is claimed)."""

    code = "not_assigned"


class PackageNotArrivedError(RoomsError, LookupError):
    """An assigned battle whose themes (carried from the desk's package) have not reached this station yet."""

    code = "not_arrived"


CLAIM_REASONS = {"unknown tournament": "unknown_tournament", "unknown battle": "unknown_battle",
                 "the battle already has a result": "has_result", "not assigned to this box": "not_assigned"}  # the hub's words (results.py) -> a code


class ClaimRefusedError(RoomsError, LookupError):
    """The hub refused a claim for a reason other than another holder: ``reason`` is a code of CLAIM_REASONS
    (or "" for a reason this version does not know; the message keeps the hub's words)."""

    code = "claim_refused"

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message, params={"reason": reason})
        self.reason = reason


def check_box_id(box_id: str) -> str:
    """``box_id`` if it is a valid box id (lowercase letters, digits, dashes; at most 31), else MessageError."""
    if not isinstance(box_id, str) or not BOX_ID.match(box_id) or box_id == HUB_DOMAIN:
        raise MessageError(f"box id {box_id!r}: lowercase letters, digits and dashes, at most 31, not 'hub'")
    return box_id


def box_stream(box_id: str) -> str:
    return f"BOX_{check_box_id(box_id)}"


def box_domain(box_id: str) -> str:
    """The JetStream domain of a station (its own stream lives there)."""
    return check_box_id(box_id)


def box_subjects(box_id: str) -> str:
    return f"{SUBJECT_ROOT}.box.{check_box_id(box_id)}.>"


def event_subject(box_id: str, battle_id: str) -> str:
    if not BATTLE_ID.match(battle_id or ""):
        raise MessageError(f"battle id {battle_id!r} is not a NATS token")
    return f"{SUBJECT_ROOT}.box.{check_box_id(box_id)}.battle.{battle_id}"


def desk_subject(box_id: str, what: str) -> str:
    """Requests from a station to the hub's desk: ``claim``, ``beat`` (a station may publish only its own)."""
    return f"{SUBJECT_ROOT}.desk.{check_box_id(box_id)}.{what}"


def source_deliver(box_id: str) -> str:
    """The deliver prefix of DESK's source consumer on a station's stream: its deliveries and heartbeats come on
    ``<prefix>.S.<random>``, a subject only that station may publish (nats-server's default, ``$JS.S.<random>``,
    would have to be open to every station)."""
    return f"{SUBJECT_ROOT}.src.{check_box_id(box_id)}"


def inbox_prefix(box_id: str) -> str:
    """Each station's replies come to inboxes of its own (its permissions allow no other)."""
    return f"_INBOX_{check_box_id(box_id)}"


def room_bucket(box_id: str) -> str:
    """The KV bucket (in the hub's domain) of one station: its assignments and what the hub confirmed."""
    return f"ROOM_{check_box_id(box_id)}"


def message_id(battle_id: str, seq: int) -> str:
    """``Nats-Msg-Id``: a resend of the same event is dropped by the stream within its duplicate window."""
    return f"{battle_id}:{seq}"


def _dumps(data: dict) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _loads(body: bytes) -> dict:
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise MessageError(f"not JSON: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MessageError("not a svoyak-rooms message")
    if data.get("v") != VERSION:
        raise MessageError(f"svoyak-rooms version {data.get('v')!r}; this box reads version {VERSION}")
    return data


def encode_event(box_id: str, battle_id: str, seq: int, event: dict) -> bytes:
    """One battle-log event (``event_to_dict`` form, docs/battle-log.md) as the station publishes it."""
    return _dumps({"format": FORMAT, "v": VERSION, "box": box_id, "battle": battle_id, "seq": seq, "event": event})


def decode_event(subject: str, body: bytes) -> dict:
    """``{box, battle, seq, event}``; the subject must name the same box and battle as the body (a station
    can publish only under its own subjects, so the subject is what vouches for the box)."""
    data = _loads(body)
    box, battle, seq, event = data.get("box"), data.get("battle"), data.get("seq"), data.get("event")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1 or not isinstance(event, dict):
        raise MessageError("an event message has seq >= 1 and an event object")
    if not isinstance(box, str) or not isinstance(battle, str) or subject != event_subject(box, battle):
        raise MessageError(f"subject {subject!r} does not match box {box!r} battle {battle!r}")
    return {"box": box, "battle": battle, "seq": seq, "event": event}


def encode(kind: str, **fields) -> bytes:
    """Any other message (assignments, claims, beats, confirmations): ``{"format", "v", "kind", ...}``."""
    return _dumps({"format": FORMAT, "v": VERSION, "kind": kind, **fields})


def decode(body: bytes, kind: str) -> dict:
    data = _loads(body)
    if data.get("kind") != kind:
        raise MessageError(f"expected a {kind!r} message, got {data.get('kind')!r}")
    return data
