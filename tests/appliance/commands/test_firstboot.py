"""``svoyak firstboot``: identity once, hotspot files from it, every later run a no-op."""

from __future__ import annotations

import json
import stat

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
