"""What every HTTP request passes before a page sees it, and what every response carries.

Anyone on the hotspot can send the box anything, and any web page a director's laptop opens can make it post a
form. So, for every request (Socket.IO's own paths are engineio's, before Flask):

- **Sizes.** The whole request is capped by Flask's ``MAX_CONTENT_LENGTH`` (413), the form fields together by
  ``MAX_FORM_MEMORY_SIZE`` (413); each field and query value by ``MAX_FIELD_CHARS`` (a few list fields by name,
  ``LONG_FIELD_CHARS``), and a field of digits only by ``MAX_NUMBER_DIGITS`` (400: a 5,000-digit "seed" never
  reaches ``int()``). All in ``appliance/config.py``. Nothing after this point runs on a 200,000-character field.
  A route that takes a whole file (``LARGE_BODIES``: the tournament import) gets its own byte limit from a
  setting, and its body is left to the validator that reads the file whole (the desk's import checks every
  field of every event, its numbers against SQLite's INTEGER and its texts against ``MAX_FIELD_CHARS``); its
  other form fields and query values pass the caps above like any route's.
- **Forged posts (CSRF).** A state-changing request (``POST``, ``PUT``, ``PATCH``, ``DELETE``) whose ``Origin``
  (or, without one, ``Referer``) is another site's, or ``null``, is refused (403). Browsers send ``Origin`` on
  every cross-site post, so a page elsewhere cannot post into the director's desk; a client that sends neither
  header is a script, not a browser tricked by a page (the PIN still guards it). Beside the ``SameSite`` cookie.
- **Headers.** A Content-Security-Policy with no inline script (the pages' scripts are files in ``static/js``;
  their settings ride in a ``<script type="application/json">`` block, data, not code), ``frame-ancestors
  'none'`` and ``X-Frame-Options: DENY`` (no page of the box in another's frame), ``nosniff``, and
  ``Referrer-Policy: same-origin``.
- **Words.** Every HTTP error the box gives (400, 403, 404, 405, 413, 500) is a page in Russian, then English, or
  JSON ``{ok: false, code, ru, en}`` for a client that asked for JSON.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from flask import current_app, jsonify, render_template, request
from werkzeug.exceptions import BadRequest, HTTPException, InternalServerError

from appliance.config import (LONG_FIELD_CHARS, MAX_FIELD_CHARS, MAX_FORM_FIELDS_BYTES, MAX_NUMBER_DIGITS,
                              MAX_REQUEST_BYTES)

log = logging.getLogger(__name__)

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MB = 1024 * 1024

# Routes (by endpoint) whose body is a whole file read whole by its own validator: the request cap is the
# setting's, and the body's fields are that validator's to check.
LARGE_BODIES = {
    "director.import_tournament": lambda settings: settings.import_mb * MB,  # a tournament's JSON export
    # a question package (.siq, a tour, a table: web/packages.py, its setting), and the form around it
    "packages.upload": lambda settings: settings.package_upload_mb * MB + 64 * 1024,
}

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",                       # files only: no inline script, no eval
    "style-src 'self' 'unsafe-inline'",        # the pages set a few style attributes (seat colours)
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",                      # Socket.IO to the box itself (ws: of the same host counts as 'self')
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class EdgeRefusal(HTTPException):
    """A request refused at the edge, with its words: ``code`` (a ``STRINGS`` key) and the values it names."""

    def __init__(self, status: int, key: str, **values) -> None:
        super().__init__()
        self.code = status
        self.key = key
        self.values = values


def install(app, catalogue) -> None:
    """Caps, the Origin check, headers and worded error pages for ``app`` (call before any blueprint registers,
    so the caps run before every other ``before_request``)."""
    app.config.update(MAX_CONTENT_LENGTH=MAX_REQUEST_BYTES, MAX_FORM_MEMORY_SIZE=MAX_FORM_FIELDS_BYTES,
                      MAX_FORM_PARTS=1000)

    @app.before_request
    def check_request():
        if request.path.startswith("/socket.io"):
            return None
        if request.method in STATE_CHANGING:
            _check_origin()
        large = LARGE_BODIES.get(request.endpoint)
        if large is not None:
            request.max_content_length = large(current_app.config["SVOYAK_SETTINGS"])
        _check_fields(body=large is None)
        return None

    @app.after_request
    def add_headers(response):
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.errorhandler(HTTPException)
    def worded(error: HTTPException):
        return _error_page(error, catalogue)

    @app.errorhandler(RecursionError)
    def too_deep(error):
        # JSON nested 50,000 deep (a body, an uploaded export) overflows any parser that reads it: the input's fault
        return _error_page(EdgeRefusal(400, "http.too_deep"), catalogue)

    @app.errorhandler(InternalServerError)
    def internal(error):
        log.error("500 on %s %s: %s", request.method, request.path, getattr(error, "original_exception", error))
        return _error_page(error, catalogue)


def _check_origin() -> None:
    origin = request.headers.get("Origin")
    source = origin if origin is not None else request.headers.get("Referer")
    if source is None:
        return  # not a browser's request: no page elsewhere made it
    parts = urlsplit(source)
    if parts.scheme not in ("http", "https") or parts.netloc.lower() != request.host.lower():
        shown = f"{parts.scheme}://{parts.netloc}" if parts.netloc else source  # "null": a sandboxed page
        raise EdgeRefusal(403, "http.foreign_origin", origin=shown[:100])


def _check_fields(body: bool) -> None:
    try:
        fields = [*request.args.items(multi=True), *request.form.items(multi=True)]
    except UnicodeDecodeError:
        raise BadRequest() from None
    for name, value in fields:
        _check_field(name, value)
    if body and request.is_json:
        try:
            body = request.get_json()
        except BadRequest:
            raise EdgeRefusal(400, "http.not_json") from None
        _check_json(body, "", 0)


def _check_field(name: str, value: str) -> None:
    digits = value.strip().lstrip("+-")  # the list fields (a sheet's marks "+-20...") are not numbers
    if len(digits) > MAX_NUMBER_DIGITS and digits.isdigit() and name not in LONG_FIELD_CHARS:
        raise EdgeRefusal(400, "http.number_too_long", field=name[:60], limit=MAX_NUMBER_DIGITS)
    limit = LONG_FIELD_CHARS.get(name, MAX_FIELD_CHARS)
    if len(name) > 200 or len(value) > limit:
        raise EdgeRefusal(400, "http.field_too_long", field=name[:60], limit=limit)


def _check_json(value, name: str, depth: int) -> None:
    """A JSON body's fields, by the same limits as a form's; numbers finite within ±2**53 (no ``1e999``)."""
    if isinstance(value, str):
        _check_field(name, value)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        if not (value == value and abs(value) <= 2**53):  # NaN is not equal to itself
            raise EdgeRefusal(400, "http.number_too_long", field=name[:60] or "JSON", limit=16)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_json(item, key, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, name, depth + 1)


def _error_page(error: HTTPException, catalogue):
    status = error.code or 500
    if isinstance(error, EdgeRefusal):
        key, values = error.key, error.values
    elif status == 413 and request.endpoint in LARGE_BODIES:  # over the route's own limit: say which
        key, values = "http.file_too_large", {"limit_mb": request.max_content_length // MB}
    else:
        key, values = (f"http.{status}" if f"http.{status}" in catalogue else "http.400"), {}
    words = catalogue.both(key, **values)
    if request.accept_mimetypes.best == "application/json" or request.is_json:
        response = jsonify({"ok": False, "code": key, **words})
    else:
        response = render_template("error.html", words=words, status=status, code=key)
    return response, status, _allow_header(error)


def _allow_header(error: HTTPException) -> dict:
    allowed = getattr(error, "valid_methods", None)
    return {"Allow": ", ".join(allowed)} if allowed else {}

