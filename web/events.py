"""Every Socket.IO event name of the svoyak protocol, defined once (docs/socketio-events.md).

Pages use the same names: :data:`CLIENT_NAMES` is rendered into every page as ``window.SVOYAK.events``,
so a name changes here or nowhere.

>>> PROTOCOL_VERSION
2
>>> CLIENT_NAMES["update"]
'update'
"""

from __future__ import annotations

PROTOCOL_VERSION = 2  # 2: every audience gets its own record (appliance/service/audience.py), its event only {type, correct?, deadline?}
NAMESPACE = "/"

# --- server -> client
HELLO = "hello"            # {protocol, role, box, server_now_ns, pin?}: sent once per connection, first
SNAPSHOT = "snapshot"      # {seq, server_now_ns, view}: the whole view; on connect and on "resync"
UPDATE = "update"          # {seq, server_now_ns, event, changes}: seq is the previous seq + 1, always
OVERLAY_LAYOUT = "overlay_layout"  # /overlay: {layout}: the stream operator switched the layout (web/overlay.py)
PIN_SHOWN = "pin_shown"    # /board, to the box's own HDMI board only: {pin, shown_ms}: the host button was held

# --- client -> server
RESYNC = "resync"          # {}: "I missed a number": the server answers with SNAPSHOT
COMMAND = "command"        # host: {id, name, args}; ack {ok, seq, duplicate} or {ok: false, error}
PRESS = "press"            # player phone: {player, code, id}; ack {ok, seq, duplicate, counted} or {ok: false, error}
CLAIM = "claim"            # player phone: {player, code}; ack {ok} or {ok: false, error}: the seat's code is right
SIMULATE = "simulate"      # simulator page: {player, action: "press"|"release"}; ack {ok}
CLOCK = "clock"            # any: {}; ack {server_now_ns}: the round trip and the server's monotonic clock

CLIENT_NAMES = {
    "hello": HELLO, "snapshot": SNAPSHOT, "update": UPDATE, "pin_shown": PIN_SHOWN, "overlay_layout": OVERLAY_LAYOUT,
    "resync": RESYNC, "command": COMMAND, "press": PRESS, "claim": CLAIM, "simulate": SIMULATE, "clock": CLOCK,
}

# Roles a connection asks for in its ``auth`` ({"role": ..., "pin": ...}).
ROLE_HOST = "host"          # commands the battle; needs the box's PIN
ROLE_BOARD = "board"        # the HDMI scoreboard: read-only (the PIN only on the box's own, when asked at the box)
ROLE_WATCH = "watch"        # anyone on the hotspot: read-only
ROLE_PLAYER = "player"      # a player's phone: a fallback buzzer when the host enables phones
ROLE_SIMULATOR = "simulator"  # on-screen buzzers; only when the box runs as a simulator
ROLE_OVERLAY = "overlay"    # the stream overlay (OBS browser source): read-only
ROLES = (ROLE_HOST, ROLE_BOARD, ROLE_WATCH, ROLE_PLAYER, ROLE_SIMULATOR, ROLE_OVERLAY)
