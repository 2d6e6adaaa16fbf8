"""``svoyak firstboot``: identity once, hotspot files from it, every later run a no-op."""

from __future__ import annotations

import json
import stat

import pytest

from appliance import cli
from appliance.service import hotspot


def run_firstboot(monkeypatch, tmp_path, *extra):
    monkeypatch.setenv("SVOYAK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SVOYAK_CONFIG", str(tmp_path / "svoyak.toml"))
    (tmp_path / "svoyak.toml").write_text("", encoding="utf-8")
    return cli.main(["firstboot", "--profile-dir", str(tmp_path / "nm"), "--dnsmasq-dir", str(tmp_path / "dns"),
                     *extra])


def test_first_boot_makes_the_identity_and_the_hotspot_files(monkeypatch, tmp_path, capsys):
    assert run_firstboot(monkeypatch, tmp_path) == 0
    identity = json.loads((tmp_path / "data/identity.json").read_text(encoding="utf-8"))
    profile = (tmp_path / "nm" / hotspot.PROFILE_FILE).read_text(encoding="utf-8")
    assert f"ssid={identity['hotspot_ssid']}" in profile and f"psk={identity['hotspot_password']}" in profile
    assert stat.S_IMODE((tmp_path / "nm" / hotspot.PROFILE_FILE).stat().st_mode) == 0o600
    assert (tmp_path / "dns" / hotspot.DNSMASQ_FILE).exists()
    shown = capsys.readouterr().out
    # The console (HDMI before the kiosk starts) shows the name, password and PIN, Russian first.
    assert identity["hotspot_ssid"] in shown and identity["hotspot_password"] in shown
    assert identity["host_pin"] in shown and "пароль / password" in shown
    assert "profile written" in shown


def test_later_boots_keep_the_identity_and_change_nothing(monkeypatch, tmp_path, capsys):
    run_firstboot(monkeypatch, tmp_path)
    first = (tmp_path / "data/identity.json").read_text(encoding="utf-8")
    capsys.readouterr()
    assert run_firstboot(monkeypatch, tmp_path, "--quiet") == 0
    assert (tmp_path / "data/identity.json").read_text(encoding="utf-8") == first
    assert capsys.readouterr().out.strip().endswith(f"unchanged ({tmp_path / 'nm'}/{hotspot.PROFILE_FILE})")


def test_no_hotspot_writes_only_the_identity(monkeypatch, tmp_path):
    assert run_firstboot(monkeypatch, tmp_path, "--no-hotspot", "--quiet") == 0
    assert (tmp_path / "data/identity.json").exists()
    assert not (tmp_path / "nm").exists() and not (tmp_path / "dns").exists()


def test_a_bad_setting_is_one_clear_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SVOYAK_HOTSPOT_PASSWORD", "short")
    assert run_firstboot(monkeypatch, tmp_path, "--quiet") == 2
    assert "hotspot_password" in capsys.readouterr().err


# --- the first-boot settings file on the card's boot partition (appliance/service/bootsettings.py)

SETTINGS_FILE = (
    "\ufeff# Настройки коробки / the box's settings\r\n"
    "wifi_country = ru\r\n"
    "hotspot_name = \"Svoyak-Club\"\r\n"
    "hotspot_password = correct-horse-42\r\n"
    "box_name = club-1\r\n"
    "hub = 192.168.1.20:8080\r\n"
)


def apply_settings(tmp_path, text, *extra):
    boot = tmp_path / "boot"
    boot.mkdir(exist_ok=True)
    (boot / "svoyak-settings.txt").write_text(text, encoding="utf-8", newline="")
    return cli.main(["firstboot", "--apply-settings", str(boot), "--config-file", str(tmp_path / "etc/svoyak.toml"),
                     "--modprobe-dir", str(tmp_path / "modprobe.d"), *extra])


def test_the_settings_file_is_applied_once_then_removed_from_the_card(monkeypatch, tmp_path, capsys):
    assert apply_settings(tmp_path, SETTINGS_FILE) == 0
    written = (tmp_path / "etc/svoyak.toml").read_text(encoding="utf-8")
    assert 'wifi_country = "RU"' in written and 'hotspot_ssid = "Svoyak-Club"' in written
    assert 'hotspot_password = "correct-horse-42"' in written and 'rooms_hub = "192.168.1.20:8080"' in written
    assert stat.S_IMODE((tmp_path / "etc/svoyak.toml").stat().st_mode) == 0o640  # it holds the password
    assert not (tmp_path / "boot/svoyak-settings.txt").exists()                    # read once: gone
    note = (tmp_path / "boot/svoyak-settings.applied.txt").read_text(encoding="utf-8")
    assert "box_name = club-1" in note and "correct-horse-42" not in note          # the password masked
    assert "ieee80211_regdom=RU" in (tmp_path / "modprobe.d/svoyak-wifi-country.conf").read_text()
    assert "applied: box_name, hotspot_password, hotspot_ssid, rooms_hub, wifi_country" in capsys.readouterr().out
    # the next boot finds no file: nothing changes
    assert cli.main(["firstboot", "--apply-settings", str(tmp_path / "boot"), "--config-file",
                     str(tmp_path / "etc/svoyak.toml")]) == 0
    assert (tmp_path / "etc/svoyak.toml").read_text(encoding="utf-8") == written
    assert "nothing to apply" in capsys.readouterr().out


def test_first_boot_takes_the_hotspot_and_name_from_the_settings_file(monkeypatch, tmp_path, capsys):
    apply_settings(tmp_path, SETTINGS_FILE)
    monkeypatch.setenv("SVOYAK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SVOYAK_CONFIG", str(tmp_path / "etc/svoyak.toml"))
    capsys.readouterr()
    assert cli.main(["firstboot", "--profile-dir", str(tmp_path / "nm"), "--dnsmasq-dir", str(tmp_path / "dns")]) == 0
    profile = (tmp_path / "nm" / hotspot.PROFILE_FILE).read_text(encoding="utf-8")
    assert "ssid=Svoyak-Club" in profile and "psk=correct-horse-42" in profile
    shown = capsys.readouterr().out
    assert "коробка / box club-1" in shown and "Svoyak-Club" in shown


def test_the_settings_already_there_are_kept(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/svoyak.toml").write_text('web_port = 8081\nplayer_buttons = [17, 27]\nplayer_leds = [5, 6]\n')
    assert apply_settings(tmp_path, "box_name = club-2\n") == 0
    from appliance import config
    settings = config.load(environ={}, config_path=tmp_path / "etc/svoyak.toml")
    assert (settings.web_port, settings.player_buttons, settings.box_name) == (8081, (17, 27), "club-2")


@pytest.mark.parametrize("text, words", [
    ("wifi_country = Russia\n", "wifi_country"),
    ("hotspot_password = short\n", "hotspot_password must be 8-63"),
    ("hotspot_password = ваш-пароль-латиницей\n", "ASCII signs only"),
    ("hotspot_name = " + "Ж" * 17 + "\n", "longer than 32 bytes"),
    ("colour = red\n", "неизвестный ключ 'colour'"),
    ("box_name = a\nbox_name = b\n", "повторяется"),
    ("just words\n", "строка 2: нужно «ключ = значение»"),
    ("box_name = клуб\n", "box_name"),
    ("hub = http://x/\n", "rooms_hub"),
])
def test_a_bad_settings_file_changes_nothing_and_says_why(tmp_path, capsys, text, words):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/svoyak.toml").write_text('web_port = 8081\n')
    assert apply_settings(tmp_path, "box_name = club-3\n" + text if "box_name" not in text else text) == 0
    out = capsys.readouterr().out
    assert "не применён, ничего не изменено" in out and words in out
    assert (tmp_path / "etc/svoyak.toml").read_text() == 'web_port = 8081\n'     # nothing half applied
    assert (tmp_path / "boot/svoyak-settings.txt").exists()                       # kept, to be fixed
    assert not list((tmp_path / "etc").glob(".svoyak-*"))                         # no temporary left
    assert not (tmp_path / "modprobe.d").exists()


def test_a_settings_file_that_is_not_text_is_refused(tmp_path, capsys):
    boot = tmp_path / "boot"
    boot.mkdir()
    (boot / "svoyak-settings.txt").write_bytes(b"box_name = \xff\xfe\n")
    assert cli.main(["firstboot", "--apply-settings", str(boot), "--config-file", str(tmp_path / "s.toml")]) == 0
    assert "не в UTF-8" in capsys.readouterr().out and not (tmp_path / "s.toml").exists()


def test_first_boot_makes_no_identity_when_the_data_partition_is_missing(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SVOYAK_DATA_MOUNT", str(tmp_path / "not-a-mount"))
    assert run_firstboot(monkeypatch, tmp_path, "--no-hotspot") == 1
    out = capsys.readouterr().out
    assert "Раздел данных не подключён" in out and "The data partition is not mounted" in out
    assert not (tmp_path / "data/identity.json").exists()


def test_the_card_template_applies_as_shipped_and_every_key_is_known(tmp_path):
    """image/svoyak-settings.txt, as the image puts it on the boot partition: all comments, so nothing changes;
    each commented example names a key the box knows."""
    from pathlib import Path

    from appliance.service import bootsettings
    template = (Path(__file__).resolve().parents[3] / "image/svoyak-settings.txt").read_text(encoding="utf-8")
    assert bootsettings.parse(template, Path("t")) == {}
    examples = [line[1:].split("=")[0].strip() for line in template.splitlines()
                if line.startswith("#") and "=" in line and " " not in line[1:].split("=")[0].strip()]
    assert sorted(examples) == sorted(bootsettings.KEYS)
