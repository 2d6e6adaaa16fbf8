"""The box's Wi-Fi hotspot: a NetworkManager profile and the captive DNS, generated from the identity.

The profile is a NetworkManager keyfile (``nm-settings-keyfile(5)``): an access point (``mode=ap``) with
WPA2-PSK (RSN, CCMP) and ``ipv4.method=shared``, in which NetworkManager gives the box ``hotspot_address``
and runs dnsmasq for DHCP and DNS. The dnsmasq snippet NetworkManager adds to that dnsmasq
(``/etc/NetworkManager/dnsmasq-shared.d/``) answers every name with the box's address, so a host who types
any address lands on the host page and phones' captive-portal probes reach the web service.

Text generation is pure; :func:`write_profile` and :func:`write_dnsmasq` write it atomically.

>>> from appliance.service.identity import Identity
>>> box = Identity("svoyak-AB12", "Svoyak-AB12", "k3mxq7t9wp", "0420")
>>> print(dnsmasq_config("10.42.0.1"), end="")
# svoyak: every name answers with the box's own address (captive portal; NetworkManager shared mode).
address=/#/10.42.0.1
>>> wifi_qr_payload(box)
'WIFI:T:WPA;S:Svoyak-AB12;P:k3mxq7t9wp;;'
"""

from __future__ import annotations

import ipaddress
import os
import re
import uuid
from pathlib import Path

from appliance.errors import ConfigError
from appliance.service.identity import Identity

CONNECTION_ID = "svoyak-hotspot"
PROFILE_DIR = Path("/etc/NetworkManager/system-connections")
DNSMASQ_DIR = Path("/etc/NetworkManager/dnsmasq-shared.d")
PROFILE_FILE = f"{CONNECTION_ID}.nmconnection"
DNSMASQ_FILE = "svoyak-captive.conf"
# Stable across rewrites, so NetworkManager updates the same connection instead of adding another.
CONNECTION_UUID = uuid.uuid5(uuid.NAMESPACE_URL, "https://svoyak.invalid/hotspot")
# SSIDs with only these characters are written as text; anything else as the keyfile's byte list.
_PLAIN_SSID = re.compile(r"[A-Za-z0-9_.-][A-Za-z0-9 _.-]*")


def _check(identity: Identity, address: str) -> ipaddress.IPv4Address:
    ssid = identity.hotspot_ssid.encode("utf-8")
    if not 1 <= len(ssid) <= 32:
        raise ConfigError(f"hotspot_ssid {identity.hotspot_ssid!r} is {len(ssid)} bytes; Wi-Fi allows 1-32")
    password = identity.hotspot_password
    # A WPA2 passphrase is 8-63 printable ASCII characters (IEEE 802.11i, annex H).
    if not (8 <= len(password) <= 63 and all(" " <= char <= "~" for char in password)):
        raise ConfigError("hotspot_password must be 8-63 printable ASCII characters (WPA2 passphrase)")
    try:
        parsed = ipaddress.IPv4Address(address)
    except ValueError:
        raise ConfigError(f"hotspot_address {address!r} is not an IPv4 address") from None
    if not parsed.is_private:
        raise ConfigError(f"hotspot_address {address} is not a private address")
    return parsed


def _keyfile_string(value: str) -> str:
    """Escape a value as GLib's key files do: backslash, leading space and control characters."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return "\\s" + escaped[1:] if escaped.startswith(" ") else escaped


def _keyfile_ssid(ssid: str) -> str:
    if _PLAIN_SSID.fullmatch(ssid):
        return ssid
    return "".join(f"{byte};" for byte in ssid.encode("utf-8"))


def keyfile(identity: Identity, address: str = "10.42.0.1") -> str:
    """The hotspot's NetworkManager keyfile for ``identity``, the box at ``address``/24.

    Raises :class:`ConfigError` for an SSID that is not 1-32 bytes, a password that is not a WPA2 passphrase,
    or an address that is not a private IPv4 address.
    """
    parsed = _check(identity, address)
    return "\n".join([
        "# svoyak hotspot, written by `svoyak firstboot` from data_dir/identity.json. Edits are overwritten.",
        "[connection]",
        f"id={CONNECTION_ID}",
        f"uuid={CONNECTION_UUID}",
        "type=wifi",
        "autoconnect=true",
        "autoconnect-priority=100",
        "",
        "[wifi]",
        "mode=ap",
        f"ssid={_keyfile_ssid(identity.hotspot_ssid)}",
        # 2.4 GHz: every phone and tablet joins it, and the Pi's radio does AP mode there on every model.
        "band=bg",
        "channel=6",
        # 2: power saving off; the host tablet's commands must not wait for the radio to wake.
        "powersave=2",
        "",
        "[wifi-security]",
        "key-mgmt=wpa-psk",
        "proto=rsn",
        "pairwise=ccmp",
        "group=ccmp",
        # 1: PMF off. The Pi's brcmfmac firmware in AP mode fails WPA2 handshakes with PMF on.
        "pmf=1",
        f"psk={_keyfile_string(identity.hotspot_password)}",
        "",
        "[ipv4]",
        "method=shared",
        f"address1={parsed}/24",
        "",
        "[ipv6]",
        "method=disabled",
        "",
    ])


def dnsmasq_config(address: str = "10.42.0.1") -> str:
    """The dnsmasq snippet that answers every DNS name with ``address`` (the box on its hotspot)."""
    parsed = ipaddress.IPv4Address(address)
    return (
        "# svoyak: every name answers with the box's own address (captive portal; NetworkManager shared mode).\n"
        f"address=/#/{parsed}\n"
    )


def wifi_qr_payload(identity: Identity) -> str:
    r"""The text of a Wi-Fi QR code (the ``WIFI:`` scheme phones' cameras join from), special characters escaped.

    >>> from appliance.service.identity import Identity
    >>> print(wifi_qr_payload(Identity("b", 'Bar;"1"', "pa:ss,word", "0000")))
    WIFI:T:WPA;S:Bar\;\"1\";P:pa\:ss\,word;;
    """
    def escape(text: str) -> str:
        return re.sub(r'([\\;,:"])', r"\\\1", text)

    return f"WIFI:T:WPA;S:{escape(identity.hotspot_ssid)};P:{escape(identity.hotspot_password)};;"


def _write_atomically(path: Path, text: str, mode: int) -> bool:
    """Write ``text`` to ``path`` (temp file, fsync, rename) with ``mode``; False if it already held it."""
    try:
        if path.read_text(encoding="utf-8") == text and (path.stat().st_mode & 0o777) == mode:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with open(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), mode)  # the umask must not widen or narrow it
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return True


def write_profile(identity: Identity, address: str = "10.42.0.1", directory: Path = PROFILE_DIR) -> bool:
    """Write the hotspot keyfile into ``directory``, readable by its owner only (NetworkManager ignores
    keyfiles others can read: they hold the password). Returns True if the file changed."""
    return _write_atomically(Path(directory) / PROFILE_FILE, keyfile(identity, address), 0o600)


def write_dnsmasq(address: str = "10.42.0.1", directory: Path = DNSMASQ_DIR) -> bool:
    """Write the captive DNS snippet into ``directory`` (0644). Returns True if the file changed."""
    return _write_atomically(Path(directory) / DNSMASQ_FILE, dnsmasq_config(address), 0o644)
