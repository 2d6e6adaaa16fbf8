"""The stream overlay in Chromium at 1920x1080 (OBS's browser source): a transparent page showing the live battle
(names, scores, theme and price, who answers in his button's colour, the press order with the gaps, a
correction), three layouts from the URL, switched live by the stream operator's PIN-protected endpoint, Russian
first and English by ``?lang=en``; and the endpoint's refusals over HTTP."""

from __future__ import annotations

import json
import re
import struct
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

import pytest

from tests.support.serving import ROOT

from .conftest import PIN

ARTIFACTS = ROOT / "artifacts" / "web"
STEP_MS = 10_000
SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"],
         "themes": [{"name": "Реки"}, {"name": "Кино"}, {"name": "Химия"}, {"name": "Спорт"}]}


def rgba(png: bytes) -> tuple[int, int, list[bytes]]:
    """``(width, height, rows)`` of an 8-bit RGBA PNG (what Chromium's screenshots are), rows unfiltered."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks, header = 8, [], None
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        body = png[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert (depth, colour, interlace) == (8, 6, 0), "not 8-bit RGBA: no alpha channel"
    raw, stride, rows, previous = zlib.decompress(b"".join(chunks)), width * 4, [], bytes(width * 4)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - 4] if i >= 4 else 0
            up, corner = previous[i], previous[i - 4] if i >= 4 else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def alphas(png: bytes) -> list[int]:
    _, _, rows = rgba(png)
    return [row[i] for row in rows for i in range(3, len(row), 4)]


def post_layout(url: str, **form) -> tuple[int, dict]:
    request = urllib.request.Request(url + "/overlay/layout", data=urllib.parse.urlencode(form).encode(),
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.browser
def test_the_overlay_is_transparent_at_1920x1080_and_follows_the_battle(server, connect, browser):
    from playwright.sync_api import expect

    host = connect("/host", pin=PIN)
    host.next("snapshot")
    page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    page.goto(server.url + "/overlay")
    assert page.evaluate("document.body.className") == "overlay layout-lower-third"
    for command, args in (("setup", SETUP), ("next", {}), ("next", {}), ("reading_done", {})):
        assert host.command(command, f"o-{command}-{len(args)}-{server.session.seq}", **args)["ok"]
    session = server.session
    capture = session.capture
    first = time.monotonic_ns()
    capture.press(2, first)           # Борис presses first, Вера 12.5 ms later
    time.sleep(0.02)
    capture.press(3, first + 12_500_000)
    assert host.command("point", "o-point")["ok"]
    seq = session.seq
    expect(page.locator("body")).to_have_attribute("data-seq", str(seq), timeout=STEP_MS)
    expect(page.locator("#ov-theme")).to_have_text("Реки")
    expect(page.locator("#ov-price")).to_have_text("10")
    expect(page.locator("#ov-answering .name")).to_have_text("Борис")
    expect(page.locator("#ov-countdown")).to_have_class(re.compile(r"\bactive\b"))  # his answer's countdown
    players = page.locator(".ov-player")
    expect(players).to_have_count(3)
    assert players.nth(1).get_attribute("class") == "ov-player answering"
    led = session.snapshot()["view"]["players"][1]["led"]
    assert led in (players.nth(1).get_attribute("style") or "")
    expect(page.locator("#ov-presses li")).to_have_count(2)
    expect(page.locator("#ov-presses li").nth(1)).to_contain_text("+13")  # the gap, in ms
    expect(page.locator("#ov-presses li").nth(1)).to_contain_text("Вера")
    assert page.locator("#ov-presses li").nth(0).inner_text().startswith("Борис")

    # OBS lays it over the camera: everything not drawn is transparent, the players' bar is not
    whole = page.screenshot(omit_background=True)
    width, height = struct.unpack(">II", whole[16:24])
    assert (width, height) == (1920, 1080)
    corner = page.screenshot(omit_background=True, clip={"x": 0, "y": 0, "width": 60, "height": 60})
    assert set(alphas(corner)) == {0}
    box = players.nth(0).bounding_box()
    inside = page.screenshot(omit_background=True, clip={"x": box["x"] + 10, "y": box["y"] + 10, "width": 20,
                                                         "height": 20})
    assert min(alphas(inside)) > 128
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "overlay-lower-third.png").write_bytes(whole)

    # a ruling and a correction reach the stream: the scores move and the hall is told
    assert host.command("right", "o-right")["ok"]
    assert host.command("correct", "o-correct", player=1, correct=False, reason="Неточный ответ")["ok"]
    expect(page.locator("body")).to_have_attribute("data-seq", str(session.seq), timeout=STEP_MS)
    expect(players.nth(1).locator(".score")).to_have_text("-10")
    expect(page.locator("#ov-announce")).to_be_visible()
    expect(page.locator("#ov-announce")).to_contain_text("Неточный ответ")
    expect(page.locator("#ov-announce")).to_contain_text("Борис")

    # the stream operator switches every overlay's layout live, with the host's PIN; "" gives the URL's back
    assert post_layout(server.url, pin="0000", layout="scores")[0] == 403
    assert page.evaluate("document.body.dataset.layout") == "lower-third"
    assert post_layout(server.url, pin=PIN, layout="scores") == (200, {"ok": True, "layout": "scores"})
    expect(page.locator("body")).to_have_attribute("data-layout", "scores", timeout=STEP_MS)
    expect(page.locator("#ov-presses")).to_be_hidden()
    expect(players.nth(0)).to_be_visible()
    (ARTIFACTS / "overlay-scores.png").write_bytes(page.screenshot(omit_background=True))
    later = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    later.goto(server.url + "/overlay?layout=full")  # a page opened after the switch follows it too
    expect(later.locator("body")).to_have_attribute("data-layout", "scores", timeout=STEP_MS)
    assert post_layout(server.url, pin=PIN, layout="")[0] == 200
    expect(page.locator("body")).to_have_attribute("data-layout", "lower-third", timeout=STEP_MS)
    expect(later.locator("body")).to_have_attribute("data-layout", "full", timeout=STEP_MS)
    (ARTIFACTS / "overlay-full.png").write_bytes(later.screenshot(omit_background=True))

    english = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    english.goto(server.url + "/overlay?lang=en")
    expect(english.locator("#ov-answering .label")).to_have_text("Answering")
    expect(page.locator("#ov-answering .label")).to_have_text("Отвечает")


def test_the_layout_endpoint_refuses_in_words(server):
    status, body = post_layout(server.url, pin=PIN, layout="sideways")
    assert status == 400 and body["ok"] is False and body["error"]["code"] == "overlay.layout"
    assert body["error"]["ru"] == "Нет такой раскладки оверлея: sideways. Есть: lower-third, full, scores"
    assert body["error"]["en"].startswith("No such overlay layout: sideways")
    status, body = post_layout(server.url, pin="0000", layout="full")
    assert status == 403 and body["error"]["code"] == "error.pin" and body["error"]["ru"] == "Неверный PIN"
