"""``svoyak firstboot``: give the box its identity and write its hotspot profile (systemd/svoyak-firstboot.service).

Idempotent: the identity is made once (``data_dir/identity.json``) and read back afterwards; the hotspot files
are rewritten only when they differ from what the identity gives. The unit runs it three times: as root with
``--apply-settings /boot/firmware`` (the first-boot settings file a person edited on the card,
appliance/service/bootsettings.py), as the service user with ``--no-hotspot`` (the identity file stays the
service's own), then as root for the NetworkManager files. What it prints goes to the console: on a Pi the
HDMI screen (the card's cmdline.txt names tty1 last, image/image.sh).
"""

from __future__ import annotations

import argparse
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-hotspot", action="store_true",
                        help="only make (or read) the identity; write no NetworkManager files")
    parser.add_argument("--quiet", action="store_true", help="do not print the identity and its QR code")
    parser.add_argument("--profile-dir", metavar="DIR", default=None,
                        help="where the hotspot keyfile goes (default /etc/NetworkManager/system-connections)")
    parser.add_argument("--dnsmasq-dir", metavar="DIR", default=None,
                        help="where the captive DNS snippet goes (default /etc/NetworkManager/dnsmasq-shared.d)")
    parser.add_argument("--apply-settings", metavar="BOOT_DIR", default=None,
                        help="only apply BOOT_DIR/svoyak-settings.txt (the card's boot partition) to the box's "
                             "settings file, then remove it; no identity, no hotspot files")
    parser.add_argument("--config-file", metavar="FILE", default=None,
                        help="the box's settings file --apply-settings writes (default /etc/svoyak/svoyak.toml)")
    parser.add_argument("--modprobe-dir", metavar="DIR", default="/etc/modprobe.d",
                        help="where --apply-settings puts the Wi-Fi country's cfg80211 option")


def run(args: argparse.Namespace) -> int:
    from appliance import config
    from appliance.service import hotspot, identity, storage

    if args.apply_settings is not None:
        return _apply_settings(args)
    settings = config.load()
    fault = storage.check(settings)
    if fault is not None:
        # No identity on the wrong file system: the console and the pages (web/fault.py) say what is wrong.
        print(f"svoyak firstboot: {fault.ru}", flush=True)
        print(f"svoyak firstboot: {fault.en} ({fault.detail})", flush=True)
        return 1
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

    import appliance.words as words

    def both(key: str) -> str:  # the console before the kiosk speaks both languages at once: «ведущий / host»
        return " / ".join(words.gettext(key, language) for language in words.LANGUAGES)

    print(f"svoyak firstboot: {both('console.box')} {box.box_name}")
    print(f"  Wi-Fi: {box.hotspot_ssid}   {both('console.password')}: {box.hotspot_password}")
    print(f"  {both('console.host')}: http://{settings.hotspot_address}/host   PIN: {box.host_pin}")
    print(f"  {both('console.director')}: http://{settings.hotspot_address}/director/   PIN: {box.director_pin}")
    segno.make(payload, error="m").terminal(out=sys.stdout, compact=True, border=2)
    sys.stdout.flush()


def _apply_settings(args: argparse.Namespace) -> int:
    """The card's settings file into the box's settings file; a bad file is named on the console and kept."""
    import grp
    from pathlib import Path

    from appliance import config
    from appliance.service import bootsettings

    boot_dir = Path(args.apply_settings)
    config_path = Path(args.config_file) if args.config_file else config.DEFAULT_CONFIG_PATH
    try:
        group_id = grp.getgrnam("svoyak").gr_gid if os.geteuid() == 0 else None
    except KeyError:
        group_id = None
    try:
        applied = bootsettings.apply(boot_dir, config_path, group_id=group_id)
    except bootsettings.SettingsFileError as error:
        print(f"svoyak firstboot: файл настроек {error.path} не применён, ничего не изменено; исправьте его на "
              f"любом компьютере и перезагрузите коробку / the settings file {error.path} was not applied, "
              "nothing changed; fix it on any computer and restart the box:", flush=True)
        for problem in error.problems:
            print(f"  - {problem}", flush=True)
        return 0   # the box boots on with the settings it had: the console said what is wrong
    if applied is None:
        print(f"svoyak firstboot: no {bootsettings.FILE_NAME} in {boot_dir}: nothing to apply")
        return 0
    country = applied.settings.get("wifi_country")
    if country:
        modprobe = Path(args.modprobe_dir) / "svoyak-wifi-country.conf"
        modprobe.parent.mkdir(parents=True, exist_ok=True)
        modprobe.write_text(bootsettings.modprobe_country(country), encoding="utf-8")
    names = ", ".join(sorted(applied.settings)) or "nothing (only comments)"
    print(f"svoyak firstboot: настройки с карты применены / settings from the card applied: {names} "
          f"-> {applied.config_path}; {bootsettings.FILE_NAME} removed, see {applied.applied_note.name}", flush=True)
    return 0
