"""The rules' shipped data, read from their files: the battle profiles (``appliance/rules/battle/profiles/``, one
TOML file per regulation) and the tournament presets (``appliance/rules/tournament/formats/``), or an organiser's
copy of either by path. The rules parse what they are handed (:func:`profile_from_dict`, :func:`parse_format`)
and read no file themselves (tests/test_layout.py).

>>> profile = load_profile("eurocup")
>>> profile.answer_limit_ms, profile.presses_window_after_reading_ms, profile.presses_during_answer
(3000, 7000, 'queue')
>>> sorted(profile_names())[:3]
['eurocup', 'eurocup-final', 'irkutsk']
>>> [stage.id for stage in load_format("eurocup").stages]
['qualifying', '1-27', '1-9', '1-3', 'final']
>>> sorted(list_formats())
['eurocup', 'irkutsk', 'mubc', 'northern-owl', 'youth-cup']
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from appliance.rules import battle as _battle
from appliance.rules import tournament as _tournament
from appliance.rules.battle import Profile, ProfileError, profile_from_dict
from appliance.rules.tournament import Format, FormatError, TournamentState, parse_format
from appliance.rules.tournament.errors import UnknownFormatError
from appliance.rules.tournament.simulate import simulate as _simulate

PROFILES_DIR = Path(_battle.__file__).resolve().parent / "profiles"
FORMATS_DIR = Path(_tournament.__file__).resolve().parent / "formats"


def profile_names() -> list[str]:
    """Names of the profiles shipped in ``profiles/``."""
    return sorted(path.stem for path in PROFILES_DIR.glob("*.toml"))


def load_profile(name_or_path: str | Path) -> Profile:
    """A shipped profile by name (``"eurocup"``) or any profile file by path.

    Raises :class:`ProfileError` if it does not exist or is not a valid profile.
    """
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = PROFILES_DIR / f"{name_or_path}.toml"
        if not path.exists():
            raise ProfileError(f"no rules profile {name_or_path!r}; shipped: {', '.join(profile_names())}")
    try:
        with path.open("rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ProfileError(f"cannot read profile {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"profile {path} is not valid TOML: {error}") from None
    return profile_from_dict(data, source=path.name)


def list_formats() -> list[str]:
    """Names of the presets shipped with the box."""
    return sorted(path.stem for path in FORMATS_DIR.glob("*.toml"))


def load_format(name_or_path: str | Path) -> Format:
    """Load a shipped preset by name (``"eurocup"``) or an organiser's copy by path; validate it fully.

    Raises :class:`UnknownFormatError` for an unknown name and :class:`FormatError` naming the field at fault.
    """
    text_path = str(name_or_path)
    if text_path.endswith(".toml") or "/" in text_path:
        path = Path(text_path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise FormatError(f"cannot read format file {path}: {error.strerror}",
                              code="format.read", params={"path": str(path), "reason": error.strerror or ""}) from None
        except tomllib.TOMLDecodeError as error:
            raise FormatError(f"format file {path} is not valid TOML: {error}",
                              code="format.toml", params={"path": str(path), "error": str(error)}) from None
        return parse_format(data, origin=str(path))
    if text_path not in list_formats():
        raise UnknownFormatError(f"no tournament preset {text_path!r}; presets: {', '.join(list_formats())}",
                                 code="format.unknown", params={"name": text_path, "presets": list_formats()})
    data = tomllib.loads((FORMATS_DIR / f"{text_path}.toml").read_text(encoding="utf-8"))
    return parse_format(data, origin=f"{text_path}.toml")


def simulate(preset: str, players: int, seed: int, **options) -> tuple[list, TournamentState]:
    """:func:`appliance.rules.tournament.simulate.simulate` of a shipped preset (or a copy by path), its battles'
    profiles read here."""
    return _simulate(load_format(preset), players, seed, profile_of=load_profile, **options)
