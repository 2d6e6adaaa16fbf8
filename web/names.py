"""Every battle name the pages use, defined once on the Python side (the service's HostCommand, the engine's
PressOutcome, Phase, ...) and rendered into every page as ``window.SVOYAK.names``, as web/events.py does for the
Socket.IO event names: a page writes ``SVOYAK.names.commands.NEXT``, a template ``{{ commands.NEXT }}``.

>>> CLIENT_NAMES["commands"]["APPEAL_DECIDE"], CLIENT_NAMES["outcomes"]["QUEUED"]
('appeal_decide', 'queued')
"""

from __future__ import annotations

from appliance.service.battle_adapter import HostCommand, page_names

CLIENT_NAMES = page_names()
TEMPLATE_NAMES = {"commands": HostCommand}  # data-cmd="{{ commands.NEXT }}" renders "next"
