"""The hotspot profile and captive DNS: generated from the identity, read back by NetworkManager's own parser
(``nmcli --offline``) and dnsmasq's own checker, written with the right modes."""

from __future__ import annotations

import configparser
import re
import shutil
import stat
import subprocess

import pytest

from appliance.errors import ConfigError
from appliance.service import hotspot
from appliance.service.identity import Identity

BOX = Identity(box_name="svoyak-AB12", hotspot_ssid="Svoyak-AB12", hotspot_password="k3mxq7t9wp", host_pin="0420")


def read_back(text: str) -> configparser.ConfigParser:
    """NetworkManager parses the keyfile, normalises it and prints it again; fails on anything invalid."""
    nmcli = shutil.which("nmcli")
    if nmcli is None:
        pytest.fail("nmcli is missing: ./dev test installs Debian's network-manager package")
    result = subprocess.run([nmcli, "--offline", "connection", "modify", "connection.id", hotspot.CONNECTION_ID],
                            input=text, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    parsed = configparser.ConfigParser(interpolation=None)
    parsed.read_string(result.stdout)
    return parsed


def test_networkmanager_reads_back_an_access_point_with_wpa2():
    profile = read_back(hotspot.keyfile(BOX, "10.42.0.1"))
    assert profile["connection"]["id"] == "svoyak-hotspot"
    assert profile["connection"]["type"] == "wifi"
    assert profile["connection"]["uuid"] == str(hotspot.CONNECTION_UUID)
    assert dict(profile["wifi"]) == {"mode": "ap", "ssid": "Svoyak-AB12", "band": "bg", "channel": "6",
                                     "powersave": "2"}
    security = profile["wifi-security"]
    assert (security["key-mgmt"], security["proto"], security["pairwise"], security["group"]) == (
        "wpa-psk", "rsn;", "ccmp;", "ccmp;")
    assert security["psk"] == "k3mxq7t9wp"
    # Shared mode: NetworkManager runs dnsmasq (DHCP + DNS) on the box's address.
    assert (profile["ipv4"]["method"], profile["ipv4"]["address1"]) == ("shared", "10.42.0.1/24")


@pytest.mark.parametrize("ssid, password", [
    ("Своя игра", "pass word\\1"),   # non-ASCII name, a space and a backslash in the password
    (" leading", " spaced pw;#="),   # a leading space in both, keyfile comment and list characters
    ("a;b=c#d", "x" * 63),          # the longest passphrase
])
def test_unusual_names_and_passwords_survive_the_round_trip(ssid, password):
    box = Identity("b", ssid, password, "0000")
    profile = read_back(hotspot.keyfile(box))
    assert ssid_bytes(profile["wifi"]["ssid"]) == ssid.encode("utf-8")
    assert unescape(profile["wifi-security"]["psk"]) == password


def unescape(value: str) -> str:
    """Undo GLib key-file escapes (\\s, \\\\, \\n, ...)."""
    escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    return re.sub(r"\\(.)", lambda match: escapes.get(match[1], "\\" + match[1]), value)


def ssid_bytes(value: str) -> bytes:
    """NetworkManager prints an SSID as text, or as its byte list (``83;118;...;``) when it is not plain."""
    if re.fullmatch(r"(\d+;)+", value):
        return bytes(int(part) for part in value.rstrip(";").split(";"))
    # A text SSID also escapes the list separator: a;b is written a\\;b.
    return unescape(value).replace("\\;", ";").encode("utf-8")


@pytest.mark.parametrize("ssid, password, address, complaint", [
    ("", "k3mxq7t9wp", "10.42.0.1", "1-32"),
    ("x" * 33, "k3mxq7t9wp", "10.42.0.1", "1-32"),
    ("Box", "short", "10.42.0.1", "8-63"),
    ("Box", "x" * 64, "10.42.0.1", "8-63"),
    ("Box", "пароль-кириллицей", "10.42.0.1", "printable ASCII"),
    ("Box", "k3mxq7t9wp", "10.42.0.300", "not an IPv4"),
    ("Box", "k3mxq7t9wp", "8.8.8.8", "not a private"),
])
def test_a_bad_identity_is_refused_with_a_reason(ssid, password, address, complaint):
    with pytest.raises(ConfigError, match=complaint):
        hotspot.keyfile(Identity("b", ssid, password, "0000"), address)


def test_dnsmasq_accepts_the_captive_dns_config(tmp_path):
    dnsmasq = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    config = tmp_path / "captive.conf"
    config.write_text(hotspot.dnsmasq_config("10.42.0.1"), encoding="utf-8")
    result = subprocess.run([dnsmasq, "--test", "-C", str(config)], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "syntax check OK" in result.stderr, result.stderr
    # Every name, the probes of phones included, resolves to the box.
    assert "address=/#/10.42.0.1" in config.read_text(encoding="utf-8").splitlines()


def test_profile_is_written_owner_only_and_rewritten_only_when_changed(tmp_path):
    assert hotspot.write_profile(BOX, "10.42.0.1", tmp_path) is True
    path = tmp_path / hotspot.PROFILE_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text(encoding="utf-8") == hotspot.keyfile(BOX, "10.42.0.1")
    assert hotspot.write_profile(BOX, "10.42.0.1", tmp_path) is False
    path.chmod(0o644)  # widened by hand: the next boot narrows it again
    assert hotspot.write_profile(BOX, "10.42.0.1", tmp_path) is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry.name for entry in tmp_path.iterdir()] == [hotspot.PROFILE_FILE]  # no temp file left


def test_dnsmasq_snippet_is_world_readable(tmp_path):
    assert hotspot.write_dnsmasq("10.42.0.1", tmp_path) is True
    assert stat.S_IMODE((tmp_path / hotspot.DNSMASQ_FILE).stat().st_mode) == 0o644
    assert hotspot.write_dnsmasq("10.42.0.1", tmp_path) is False


def test_wifi_qr_payload_joins_the_hotspot():
    assert hotspot.wifi_qr_payload(BOX) == "WIFI:T:WPA;S:Svoyak-AB12;P:k3mxq7t9wp;;"
