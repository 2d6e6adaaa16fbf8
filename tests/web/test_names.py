"""The battle names the pages use come from one place (web/names.py, from the service's and the engine's enums),
as the Socket.IO event names come from web/events.py: no page spells a host command or a press outcome."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from appliance.service.battle_adapter import HOST_COMMANDS, BattleAdapter, HostCommand, page_names
from appliance.service.session import Session
from web import create_app
from web.names import CLIENT_NAMES
from web.sync import Services

from .conftest import IDENTITY

WEB = Path(__file__).resolve().parents[2] / "web"
BOX = {"Host": "10.42.0.1"}


@pytest.fixture
def client(settings, memory_battles):
    session = Session(memory_battles, BattleAdapter(), simulator=True).start(timer_thread=False)
    return create_app(settings, Services(session=session, identity=IDENTITY)).test_client()


def test_every_page_gets_the_names_and_the_host_page_renders_its_buttons_from_them(client):
    page = client.get("/host", headers=BOX).get_data(as_text=True)
    config = json.loads(re.search(r'<script type="application/json" id="svoyak-config">(.*?)</script>', page).group(1))
    assert config["names"] == page_names() == CLIENT_NAMES
    assert config["names"]["commands"] == {command.name: command.value for command in HostCommand}
    rendered = re.findall(r'data-cmd="([^"]*)"', page)
    assert len(rendered) == 16 and set(rendered) <= set(HOST_COMMANDS)


def test_the_host_template_spells_no_command():
    template = (WEB / "templates" / "host.html").read_text(encoding="utf-8")
    attributes = re.findall(r'data-cmd="([^"]*)"', template)
    assert len(attributes) == 16
    for attribute in attributes:
        match = re.fullmatch(r"\{\{ commands\.([A-Z_]+) \}\}", attribute)
        assert match and match.group(1) in HostCommand.__members__, attribute


@pytest.mark.parametrize("script", ["host.js", "svoyak.js", "board.js"])
def test_the_scripts_spell_no_command_and_no_counting_outcome(script):
    code = (WEB / "static" / "js" / script).read_text(encoding="utf-8")
    calls = re.findall(r'\b(?:send|tryCommand|allowed)\(\s*["\'](\w+)["\']', code)
    assert [name for name in calls if name in HOST_COMMANDS] == []
    # a press outcome, a phase or a source compared with a spelt word
    assert re.findall(r'\.(?:outcome|phase|source|reading)\s*[!=]==?\s*["\']\w+', code) == []
    assert re.findall(r'new Set\(\[\s*["\']', code) == []
