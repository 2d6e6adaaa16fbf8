"""PIN guesses an attacker gets, measured the way the issue's trial did it: 199 loopback addresses (127.0.0.2-200,
each client socket bound to its own) posting PINs to the director's login as fast as they can, for three minutes
(``SVOYAK_BENCH_GUESS_S`` to change). Before the box-wide budget, this got about 970 guesses a minute through and
29 % of a 4-digit PIN space in three minutes. The figures: guesses judged per minute once the first burst is
spent, and the share of the PIN space that rate gives in a day (target: under 1 %)."""

from __future__ import annotations

import http.client
import itertools
import logging
import os
import tempfile
import threading
import time
import types
import urllib.parse

PIN = "246813"
ADDRESSES = [f"127.0.0.{n}" for n in range(2, 201)]
WORKERS = 24


class _Session:
    """Just enough of a live session for the pages (nobody plays battles here)."""

    battles = None

    def subscribe(self, callback):
        self.callback = callback


def run(report) -> None:
    from werkzeug.serving import make_server

    from appliance import config
    from web import create_app
    from web.sync import Services

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per refused guess
    seconds = 2.0 if report.short else float(os.environ.get("SVOYAK_BENCH_GUESS_S", "180"))
    identity = types.SimpleNamespace(box_name="svoyak-BNCH", hotspot_ssid="Svoyak-BNCH", hotspot_password="x" * 10,
                                     host_pin="135791", director_pin=PIN, session_secret="")
    with tempfile.TemporaryDirectory() as folder:
        settings = config.load(overrides={"data_dir": folder, "simulator": True}, environ={}, config_path=None)
        app = create_app(settings, Services(session=_Session(), identity=identity))
        http_server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=http_server.serve_forever, daemon=True)
        thread.start()
        port = http_server.server_port

        def guard():  # the director PIN's own guard (web/auth.py), made at the first login
            return app.extensions["svoyak.director_pin_guard"]

        addresses = itertools.cycle(ADDRESSES)
        guesses = (f"{n:06d}" for n in itertools.count(100_000))
        lock = threading.Lock()
        counts = {"sent": 0}
        started = time.monotonic()
        burst_spent_at = [None]

        def work():
            for _ in range(10_000_000):  # bounded; the deadline ends it first
                if time.monotonic() - started >= seconds:
                    return
                with lock:
                    address, guess = next(addresses), next(guesses)
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(address, 0))
                try:
                    connection.request("POST", "/director/login", body=urllib.parse.urlencode({"pin": guess}),
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})
                    connection.getresponse().read()
                finally:
                    connection.close()
                with lock:
                    counts["sent"] += 1
                    if burst_spent_at[0] is None and guard().wrong >= guard().burst:
                        burst_spent_at[0] = (time.monotonic(), guard().wrong)

        workers = [threading.Thread(target=work) for _ in range(WORKERS)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        elapsed = time.monotonic() - started
        http_server.shutdown()
        thread.join(5)
    guard = guard()
    spent_at, spent_count = burst_spent_at[0] or (started, guard.wrong)
    steady_minutes = max(1e-9, (started + elapsed - spent_at) / 60)
    per_minute = (guard.wrong - spent_count) / steady_minutes
    report.figure(f"PIN guesses sent from {len(ADDRESSES)} addresses", counts["sent"] / (elapsed / 60), "/min")
    report.figure(f"PIN guesses judged in {elapsed:.0f} s (the rest refused unchecked)", guard.wrong, "guesses",
                  target=guard.burst + elapsed * 1e9 / guard.refill_ns + 1)
    report.figure("PIN guesses judged per minute once the burst is spent", per_minute, "/min",
                  target=60e9 / guard.refill_ns + 1)
    report.figure("share of the PIN space that rate gives in a day", per_minute * 1440 / guard.space * 100, "%",
                  target=1.0)
