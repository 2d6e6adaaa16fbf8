"""Press on a mock pin to the scoreboard's DOM, with 30 scoreboards connected; beside it, the bare Socket.IO
round trip measured in the same run.

The whole box runs as ``svoyak run --simulator`` does (gunicorn gthread + the capture service on mock pins).
A press is driven on a mock pin inside the capture process (``sim_press``, the simulator's path); its edge
timestamp (CLOCK_MONOTONIC) starts the clock. Each of the 30 scoreboards (headless Chromium pages) notes when
a MutationObserver sees its press list change, in ``performance.now()``; the offset between each page's clock
and CLOCK_MONOTONIC is measured first (the fastest of 30 round trips). Every (press, scoreboard) pair is a
sample. Targets (issue 4): median 5 ms, p99 20 ms.

Three runs, 30 scoreboards connected in each:

- the HDMI scoreboard (1 Chromium page, connected first as the box's kiosk is at boot) beside 29 python
  Socket.IO scoreboards in a process of their own (standing for the hall's phones and screens): the targets;
- the same with the Chromium page connected last, so that it is served last of the 30 (the fan-out's worst
  place), also against the targets;
- 30 Chromium scoreboards, every one measured: their 30 renderers share this machine's 2 cores with the
  server, which a hall's devices do not (figures without a target).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import median, percentile

BOARDS = 30
PRESSES = 120  # p99 of 120 samples is the second-slowest: fewer and it is the slowest alone
ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
                 "--disable-backgrounding-occluded-windows"]

OBSERVE = """() => {
  window.__marks = [];
  window.__received = [];
  // Received: when Engine.IO hands the update's packet to Socket.IO, before the page's own handler runs.
  SVOYAK.links[0].socket.io.engine.on("packet", (packet) => {
    if (packet.type === "message" && packet.data.startsWith('2/board,["' + SVOYAK.events.update + '"'))
      window.__received.push(performance.now());
  });
  const list = document.getElementById("board-presses");
  new MutationObserver(() => {
    const first = list.querySelector("li");
    if (first) window.__marks.push({ at_ms: performance.now(), seq: Number(document.body.dataset.seq) });
  }).observe(list, { childList: true });
}"""

ROUND_TRIPS = """async (count) => {
  const socket = io("/board", { transports: ["websocket"] });
  await new Promise((ok) => socket.on("connect", ok));
  const trips = [];
  for (let i = 0; i < count; i++) {
    const sent = performance.now();
    await new Promise((ok) => socket.emit(SVOYAK.events.clock, {}, ok));
    trips.push(performance.now() - sent);
  }
  socket.disconnect();
  return trips;
}"""


def _clock_offset_ms(page) -> float:
    """``performance.now()`` minus this process's CLOCK_MONOTONIC (ms), from the fastest of 30 round trips:
    the error is at most half that trip (a fraction of a millisecond)."""
    best = None
    for _ in range(30):
        before = time.monotonic_ns()
        browser_ms = page.evaluate("performance.now()")
        after = time.monotonic_ns()
        if best is None or after - before < best[0]:
            best = (after - before, browser_ms - (before + after) / 2e6)
    return best[1]


def _listen(url: str, count: int) -> None:
    """``count`` python Socket.IO scoreboards on ``url``; says "ready" on stdout and stays until stdin closes."""
    import socketio

    boards = [socketio.Client(reconnection=False) for _ in range(count)]
    for board in boards:
        board.connect(url, namespaces=["/board"], transports=["websocket"], wait_timeout=10)
    print("ready", flush=True)
    sys.stdin.read()
    for board in boards:
        board.eio.disconnect(abort=True)


def _listeners(url: str, count: int) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "bench.bench_web", url, str(count)], cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if process.stdout.readline().strip() != "ready":
        process.kill()
        process.wait()
        process.stdin.close()
        process.stdout.close()
        raise RuntimeError("the listening scoreboards did not connect")
    return process


def _measure(url: str, pin: str, browser_boards: int, client_boards: int, presses: int,
             clients_first: bool = False) -> tuple:
    """Play ``presses`` questions with ``browser_boards`` Chromium scoreboards and ``client_boards`` python
    Socket.IO scoreboards connected (before the Chromium ones with ``clients_first``); return (every board's
    press->DOM ms, the first board's, round trips ms, press edge -> update stamped ms, press -> received ms)."""
    import socketio
    from playwright.sync_api import sync_playwright

    host = socketio.Client(reconnection=False)
    sim = socketio.Client(reconnection=False)
    stamped_ms: list[float] = []  # press edge -> update made (capture, link, engine, durable append, view)

    def on_update(update):
        event = update.get("event") or {}
        if event.get("type") == "ButtonPressed":
            stamped_ms.append((update["server_now_ns"] - event["at_ns"]) / 1e6)

    host.on("update", on_update, namespace="/host")
    listeners = None
    try:
        host.connect(url, namespaces=["/host"], auth={"pin": pin}, transports=["websocket"], wait_timeout=10)
        sim.connect(url, namespaces=["/sim"], transports=["websocket"], wait_timeout=10)
        command_ids = iter(range(1, 10**6))

        def command(name, **args):
            ack = host.call("command", {"id": f"m{next(command_ids)}", "name": name, "args": args},
                            namespace="/host", timeout=10)
            if not ack["ok"]:
                raise RuntimeError(f"{name}: {ack['error']}")
            return ack

        command("setup", profile="eurocup", players=["A", "B", "C"], themes=presses // 5 + 1)
        if client_boards and clients_first:
            listeners = _listeners(url, client_boards)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 960, "height": 540})
            boards = []
            for _ in range(browser_boards):
                page = context.new_page()
                page.goto(url + "/board")
                page.wait_for_selector("#conn.conn-online")
                page.evaluate(OBSERVE)
                boards.append(page)
            if client_boards and not clients_first:
                listeners = _listeners(url, client_boards)  # the phones join after the box's own kiosk
            offsets_ms = [_clock_offset_ms(page) for page in boards]
            every, first, arrived, received = [], [], [], []
            for number in range(presses):
                if number % 5 == 0:
                    command("next")                     # the theme
                ack = command("next")                   # the price; reading starts; buttons armed
                for page in boards:
                    _wait_until(page, f"Number(document.body.dataset.seq) >= {ack['seq']}")
                    page.evaluate("window.__marks = []; window.__received = []")
                player = number % 3
                sim.call("simulate", {"player": player, "action": "press"}, namespace="/sim", timeout=10)
                marks = []
                for page, offset_ms in zip(boards, offsets_ms):
                    _wait_until(page, "window.__marks.length > 0")
                    marks.append(page.evaluate("window.__marks[0].at_ms") - offset_ms)
                    arrived.append(page.evaluate("window.__received[0]") - offset_ms)
                sim.call("simulate", {"player": player, "action": "release"}, namespace="/sim", timeout=10)
                edge_ms = _snapshot(host)["view"]["presses"][0]["t_ns"] / 1e6
                every += [mark - edge_ms for mark in marks]
                received += [when - edge_ms for when in arrived[-len(marks):]]
                first.append(min(marks) - edge_ms)
                command("withdraw")
            trips = boards[0].evaluate(ROUND_TRIPS, 200)
            browser.close()
        return every, first, trips, stamped_ms, received
    finally:
        if listeners is not None:
            listeners.stdin.close()
            listeners.wait(timeout=30)
            listeners.stdout.close()
        for client in (host, sim):
            if client.connected:
                client.disconnect()


def run(report) -> None:
    from tests.support.serving import simulator_box  # the same box, and the same start-up wait, as the browser tests

    boards, presses = (3, 5) if report.short else (BOARDS, PRESSES)
    runs = ((f"HDMI board first of {boards}", 1, boards - 1, False, True),
            (f"HDMI board last of {boards}", 1, boards - 1, True, True),
            (f"{boards} Chromium boards", boards, 0, False, False))
    if report.short:  # a box started for each run: the fan-out's worst place (HDMI board last) is left out
        runs = runs[::2]
    for label, browser_boards, client_boards, clients_first, targets in runs:
        with tempfile.TemporaryDirectory(prefix="bench-web-") as folder, simulator_box(Path(folder)) as box:
            every, first, trips, stamped, received = _measure(box["url"], box["host_pin"], browser_boards,
                                                              client_boards, presses, clients_first)
        report.figure(f"press -> board DOM, median, {label}", median(every), "ms", target=5 if targets else None)
        report.figure(f"press -> board DOM, p99, {label}", percentile(every, 0.99), "ms",
                      target=20 if targets else None)
        if browser_boards > 1:
            report.figure(f"press -> first board's DOM, median, {label}", median(first), "ms")
        report.figure(f"  of which press -> update made (engine, fsync), median, {label}", median(stamped), "ms")
        report.figure(f"  of which press -> update received by the page, median, {label}", median(received), "ms")
        report.figure(f"bare Socket.IO round trip (browser), median, {label}", median(trips), "ms")
        report.figure(f"bare Socket.IO round trip (browser), p99, {label}", percentile(trips, 0.99), "ms")
        report.ratio(f"press->DOM median / bare round trip median, {label}", median(every), median(trips))


def _wait_until(page, expression: str, seconds: float = 10) -> None:
    """Poll ``expression`` from here until it is true. Not ``page.wait_for_function``: that one evaluates its
    string inside the page, which the pages' CSP rightly forbids (no ``'unsafe-eval'``); ``page.evaluate`` runs
    through the DevTools protocol, outside the CSP. The figures are timed in the page (the MutationObserver's
    marks), so how soon this poll notices does not enter them."""
    deadline = time.monotonic() + seconds
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the board never had {expression}")
        time.sleep(0.002)


def _snapshot(client) -> dict:
    """A fresh snapshot over the host's own connection (resync answers with one)."""
    got = []
    client.on("snapshot", got.append, namespace="/host")
    client.emit("resync", {}, namespace="/host")
    deadline = time.monotonic() + 10
    while not got and time.monotonic() < deadline:
        time.sleep(0.001)
    return got[-1]


if __name__ == "__main__":  # the listening scoreboards' own process (see _listeners)
    _listen(sys.argv[1], int(sys.argv[2]))
