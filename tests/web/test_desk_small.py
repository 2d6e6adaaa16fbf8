"""Small things a user sees (issue 12): an icon on every page instead of a 404; the director PIN stays off the
audience's board."""

from __future__ import annotations

import json
import urllib.request

from .conftest import DIRECTOR_PIN


def test_every_page_has_an_icon_and_the_icon_is_served(server):
    with urllib.request.urlopen(f"{server.url}/favicon.ico", timeout=5) as response:
        assert response.status == 200 and response.headers["Content-Type"] == "image/vnd.microsoft.icon"
        icon = response.read()
    assert icon[:4] == b"\x00\x00\x01\x00" and b"PNG" in icon  # an ICO holding PNG images (16 and 32 px)
    for page in ("/", "/host", "/board", "/watch", "/play", "/director/login"):
        with urllib.request.urlopen(f"{server.url}{page}", timeout=5) as response:
            assert 'rel="icon" href="/favicon.ico"' in response.read().decode(), page


def test_the_director_pin_is_never_on_the_board(server, connect):
    board = connect("/board")  # a board on the box itself, where the host's PIN once showed
    hello = board.next("hello")
    assert DIRECTOR_PIN not in json.dumps(hello, ensure_ascii=False)
    board.next("snapshot")
    assert DIRECTOR_PIN not in json.dumps(board.view, ensure_ascii=False)
    with urllib.request.urlopen(f"{server.url}/board", timeout=5) as response:
        assert DIRECTOR_PIN not in response.read().decode()
