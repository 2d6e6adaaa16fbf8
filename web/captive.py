"""The HTTP side of the captive portal: phones that join the hotspot are led to the box's start page.

The box's DNS (systemd/, image/) answers every name with the box's address, so a phone's connectivity check
lands here. We answer it *on purpose* with a redirect instead of the expected reply (Android's 204, Apple's
"Success", Windows' "Microsoft Connect Test"), so the phone shows its "sign in to network" sheet, which opens
the start page (host / watch / phone buzzer). Any other request that names a host we are not (a bookmark, a
typed address) is redirected to the box too; requests by IP address, by the box's names or from the box
itself are served as they are.
"""

from __future__ import annotations

import ipaddress

from flask import Blueprint, current_app, redirect, request

blueprint = Blueprint("captive", __name__)

# Connectivity-check paths of the common systems (their hosts vary; the paths are what they ask for).
CHECK_PATHS = (
    "/generate_204", "/gen_204",                        # Android, ChromeOS
    "/hotspot-detect.html", "/library/test/success.html",  # Apple
    "/connecttest.txt", "/ncsi.txt", "/redirect",       # Windows
    "/success.txt", "/canonical.html",                  # Firefox
    "/check_network_status.txt",                        # some Android skins
)


def portal_url() -> str:
    """The start page on the box's hotspot address, e.g. ``http://10.42.0.1/``."""
    settings = current_app.config["SVOYAK_SETTINGS"]
    port = "" if settings.web_port == 80 else f":{settings.web_port}"
    return f"http://{settings.hotspot_address}{port}/"


def is_own_host(host_header: str) -> bool:
    """True for an IP literal, ``localhost`` or one of the box's names; False for any other name."""
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1:host.find("]")]
    elif host.count(":") == 1:
        host = host.split(":")[0]
    if not host:
        return True
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    hub = current_app.extensions["svoyak.hub"]
    box = hub.services.identity.box_name.lower()
    return host in {"localhost", box, f"{box}.local", "svoyak", "svoyak.local"}


@blueprint.before_app_request
def redirect_foreign_hosts():
    if request.path.startswith("/socket.io"):
        return None
    if request.path in CHECK_PATHS or not is_own_host(request.host):
        return redirect(portal_url(), code=302)
    return None


def _check(path):  # pragma: no cover - before_app_request answers first; the route makes the path known
    return redirect(portal_url(), code=302)


for _path in CHECK_PATHS:
    blueprint.add_url_rule(_path, endpoint=f"check{_path.replace('/', '_').replace('.', '_')}", view_func=_check)
