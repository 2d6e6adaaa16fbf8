"""The tournament engine: formats as data, seeded constrained draws, advancement by the regulations' rules.

Pure: no clock, no ``random``, no I/O. Time arrives as ``at_ns`` on events, randomness as seeds. The service
(``appliance.service.tournaments``) stores the events and offers the director's commands.

>>> from appliance.rules.tournament import *
>>> from appliance.service.presets import load_format
>>> fmt = load_format("northern-owl")
>>> state = apply(TournamentState(), TournamentCreated(0, "t1", "Сова", fmt.source["data"], seed=7))
>>> for n in range(38):
...     state = apply(state, PlayerRegistered(n + 1, f"p{n:02d}", f"Игрок {n}"))
>>> len(field(state).accepted), field(state).waiting   # northern-owl 1.1: 36, then a waiting list
(36, ('p36', 'p37'))
>>> state = apply(state, PlayerWithdrew(50, "p03"))
>>> field(state).waiting
('p37',)
"""

from appliance.rules.tournament.draw_plan import plan_draw
from appliance.rules.tournament.entry import Field, field, playing_stages
from appliance.rules.tournament.outcomes import (Advance, StageOutcome, Tie, battle_players, open_ties, outcome,
                                                stage_participants, swiss_table)
from appliance.rules.tournament.progress import Standing, Step, StepKind, advancement_log, next_step, standings
from appliance.rules.tournament.seats import SeatRef, TieId, stage_cuts
from appliance.rules.tournament.events import (EVENTS, BattleAssigned, BattleLinked, BattleResultRecorded, BattleSpec, DeadlineSet,
                                               PlayerRegistered,
                                               PlayerWithdrew, RegistrationClosed, SeedsSet, StageClosed,
                                               StageDrawn, ThemesNamed, TieBroken, TournamentCreated, WrittenSheetEntered,
                                               from_dict, to_dict)
from appliance.rules.tournament.errors import (DrawError, FormatError, RegistrationError, ResultError, StageError,
                                               TournamentError)
from appliance.rules.tournament.formats import Format, Stage, parse_format
from appliance.rules.tournament.prng import Rng, derive_seed
from appliance.rules.tournament.results import BattleResult, PlayerResult, Shootout, score_written
from appliance.rules.tournament.state import TournamentState
from appliance.rules.tournament.transitions import apply, replay

__all__ = [
    "EVENTS", "Advance", "BattleAssigned", "BattleLinked", "DeadlineSet", "DrawError", "FormatError", "RegistrationError", "ResultError", "StageError",
    "TournamentError", "BattleResult", "BattleResultRecorded", "BattleSpec", "Field", "Format",
    "PlayerRegistered", "PlayerResult", "PlayerWithdrew", "RegistrationClosed", "Rng", "SeedsSet", "Shootout",
    "Stage", "StageClosed", "StageDrawn", "StageOutcome", "Standing", "Step", "StepKind", "ThemesNamed", "Tie",
    "TieBroken",
    "TournamentCreated", "TournamentState", "WrittenSheetEntered", "advancement_log", "apply", "battle_players",
    "derive_seed", "field", "from_dict", "next_step", "open_ties", "outcome",
    "SeatRef", "TieId", "parse_format", "plan_draw", "playing_stages", "stage_cuts", "replay", "score_written", "stage_participants", "standings", "swiss_table",
    "to_dict",
]
