"""Made the v1-*.jsonl archive from v1-scripts.toml with the rules version 1 engine (commit cf360f2). Kept to
show how the archive was made; it is not run by the tests, and running it with a later engine would not give
version 1 logs."""

import json
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_scenarios import event_for  # noqa: E402

from appliance.rules.battle import BattleSetUp, apply
from appliance.service.presets import load_profile
from appliance.store import dump_log  # noqa: E402


def main() -> None:
    from test_archive import digest  # noqa: E402

    expected = {}
    for battle in tomllib.loads((HERE / "v1-scripts.toml").read_text(encoding="utf-8"))["battle"]:
        setup = BattleSetUp(at_ns=0, profile=load_profile(battle["profile"]), players=tuple(battle["players"]),
                            themes=battle.get("themes", 1), red_themes=tuple(battle.get("red_themes", ())),
                            absent=tuple(battle.get("absent", ())), spare_themes=battle.get("spare_themes"))
        state = apply(None, setup)
        events = [setup]
        for line in battle["steps"]:
            time_text, *words = line.split()
            event = event_for(state, words, round(float(time_text) * 1_000_000_000))
            try:
                state = apply(state, event)
            except Exception as error:
                raise SystemExit(f"{battle['name']}: {line}: {error}")
            events.append(event)
        name = battle["name"]
        (HERE / f"v1-{name}.jsonl").write_text(dump_log(f"archive-{name}", events), encoding="utf-8")
        expected[name] = digest(state)
    (HERE / "v1-expected.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n",
                                           encoding="utf-8")


if __name__ == "__main__":
    main()
