"""The page a box serves when it cannot store a battle (appliance/service/storage.py): every address answers it.

The web service starts even when the data partition did not mount (a box without a keyboard must not stop in
emergency mode), but then it runs no session and opens no store: the scoreboard on the HDMI screen, the host
page and every phone show what is wrong, in Russian first, and no battle can start. ``/healthz`` answers 503
with the same words as plain text. The page asks again every 30 s (a reboot after the card was fixed).
"""

from __future__ import annotations

from flask import Flask, Response
from markupsafe import escape

from appliance.service.storage import StorageFault

RETRY_S = 30

_PAGE = """<!doctype html>
<html lang="ru">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{retry}">
<title>Своя игра: коробка не может сохранить бой / svoyak: the box cannot store a battle</title>
<link rel="stylesheet" href="/static/css/svoyak.css">
</head>
<body>
<main>
<section class="panel block" role="alert" data-code="storage">
  <h1 lang="ru">Коробка не может сохранить бой</h1>
  <p lang="ru">{ru}</p>
  <h2 lang="en">The box cannot store a battle</h2>
  <p lang="en">{en}</p>
  <p><small>{detail}</small></p>
</section>
</main>
</body>
</html>
"""


def create_fault_app(fault: StorageFault) -> Flask:
    """A Flask app whose every address answers 503 with ``fault`` (and the stylesheet, for the page's look)."""
    app = Flask(__name__)
    page = _PAGE.format(retry=RETRY_S, ru=escape(fault.ru), en=escape(fault.en), detail=escape(fault.detail))

    @app.route("/healthz")
    def healthz() -> Response:
        return Response(fault.line() + "\n", status=503, mimetype="text/plain")

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST", "PUT", "DELETE", "PATCH"])
    @app.route("/<path:path>", methods=["GET", "POST", "PUT", "DELETE", "PATCH"])
    def everything(path: str) -> Response:
        response = Response(page, status=503, mimetype="text/html")
        response.headers["Retry-After"] = str(RETRY_S)
        response.headers["Cache-Control"] = "no-store"
        return response

    app.extensions["svoyak.fault"] = fault
    return app
