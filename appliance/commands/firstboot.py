"""``svoyak firstboot``: give the box its identity and write its hotspot profile (systemd/svoyak-firstboot.service).

Idempotent: the identity is made once (``data_dir/identity.json``) and read back afterwards; the hotspot files
are rewritten only when they differ from what the identity gives. The unit runs it twice: as the service user
with ``--no-hotspot`` (the identity file stays the service's own), then as root for the NetworkManager files.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-hotspot", action="store_true",
                        help="only make (or read) the identity; write no NetworkManager files")
    parser.add_argument("--quiet", action="store_true", help="do not print the identity and its QR code")
    parser.add_argument("--profile-dir", metavar="DIR", default=None,
                        help="where the hotspot keyfile goes (default /etc/NetworkManager/system-connections)")
    parser.add_argument("--dnsmasq-dir", metavar="DIR", default=None,
                        help="where the captive DNS snippet goes (default /etc/NetworkManager/dnsmasq-shared.d)")


def run(args: argparse.Namespace) -> int:
    from appliance import config
    from appliance.service import hotspot, identity

    settings = config.load()
    box = identity.load_or_create(settings)
    if not args.quiet:
        _show(box, settings, hotspot.wifi_qr_payload(box))
    if args.no_hotspot:
        return 0
    profile_dir = args.profile_dir or hotspot.PROFILE_DIR
    dnsmasq_dir = args.dnsmasq_dir or hotspot.DNSMASQ_DIR
    changed = hotspot.write_profile(box, settings.hotspot_address, profile_dir)
    changed |= hotspot.write_dnsmasq(settings.hotspot_address, dnsmasq_dir)
    print(f"svoyak firstboot: hotspot profile {'written' if changed else 'unchanged'} "
          f"({profile_dir}/{hotspot.PROFILE_FILE})")
    return 0


def _show(box, settings, payload: str) -> None:
    """Print the identity and a Wi-Fi QR code on the console (the HDMI screen before the kiosk starts)."""
    import segno

    print(f"svoyak firstboot: коробка {box.box_name} / box {box.box_name}")
    print(f"  Wi-Fi: {box.hotspot_ssid}   пароль / password: {box.hotspot_password}")
    print(f"  ведущий / host: http://{settings.hotspot_address}/host   PIN: {box.host_pin}")
    print(f"  директор / director: http://{settings.hotspot_address}/director/   PIN: {box.director_pin}")
    segno.make(payload, error="m").terminal(out=sys.stdout, compact=True, border=2)
    sys.stdout.flush()
