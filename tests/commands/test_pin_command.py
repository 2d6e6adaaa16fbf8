"""``svoyak pin``: a host who lost the PIN gets it back at the box's console."""

from __future__ import annotations

import json

from svoyak.cli import main


def test_pin_prints_the_boxs_host_pin(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SVOYAK_DATA_DIR", str(tmp_path))
    (tmp_path / "none.toml").write_text("")
    monkeypatch.setenv("SVOYAK_CONFIG", str(tmp_path / "none.toml"))
    assert main(["pin", "--bare"]) == 0                      # made at first use like every identity
    pin = json.loads((tmp_path / "identity.json").read_text())["host_pin"]
    assert capsys.readouterr().out == pin + "\n"
    assert main(["pin"]) == 0
    assert capsys.readouterr().out.endswith(f": {pin}\n")
