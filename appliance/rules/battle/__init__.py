"""The battle engine: events in, state out. See docs/battle-engine.md.

Public API::

    apply(state_or_None, event) -> BattleState      # raises BattleRuleError (.rule, .code, .params, .event)
    standings(state) -> Standings                   # places, indicators, placement points, shoot-out call
    profile_from_dict(data) -> Profile                # the service reads the files (appliance.service.presets)
    event_to_dict(event) / event_from_dict(dict)    # the battle log's line format
    replay(events) -> BattleState
    press_outcome / can_press / buttons_armed / eligible_players(state, ...)  # the rules' queries (queries.py)
"""

from appliance.rules.battle.choices import (COUNTED_OUTCOMES, Appeals, Choice, CorrectionKind, DuringAnswer,
                                            HostCorrections, Mode, OutsideWindow, Phase, PressesOpenAt, PressOutcome,
                                            PressSource, QuestionOutcome, Reading, TieBreak)
from appliance.rules.battle.engine import apply, next_run, replay
from appliance.rules.battle.errors import BattleRuleError, ProfileError
from appliance.rules.battle.events import (EVENT_TYPES, ActionUndone, AnswerAnnounced, AnswererPointed, AnswerJudged,
                                           AnswerTimeExtended, AppealDecided, AppealLodged, BattleSetUp,
                                           ButtonPressed, ClarificationRequested, Event, ModeChanged,
                                           PressWindowExpired, PriceAnnounced, QuestionWithdrawn, ReadingFinished,
                                           ReadingResumed, ReadingStarted, RulingCorrected, ShortFormGiven,
                                           ThemeStarted, TimeCalled, event_from_dict, event_to_dict)
from appliance.rules.battle.queries import (PRESS_OUTCOMES, buttons_armed, can_press, eligible_players,
                                            press_outcome)
from appliance.rules.battle.profile import Profile, profile_from_dict, profile_to_dict
from appliance.rules.battle.standings import PlayerStanding, ShootoutCall, Standings, standings
from appliance.rules.battle.state import BattleState, Press, Question, Ruling, Theme
from appliance.rules.battle.versions import RULES_VERSION, RULES_VERSIONS, RulesVersion

__all__ = [
    "apply", "next_run", "press_outcome", "can_press", "buttons_armed", "eligible_players", "PRESS_OUTCOMES",
    "RULES_VERSION", "RULES_VERSIONS", "RulesVersion", "Choice", "COUNTED_OUTCOMES", "Appeals", "CorrectionKind",
    "DuringAnswer", "HostCorrections",
    "Mode", "OutsideWindow", "Phase", "PressesOpenAt", "PressOutcome", "PressSource", "QuestionOutcome", "Reading",
    "TieBreak", "standings", "replay",
    "profile_from_dict", "profile_to_dict", "event_to_dict", "event_from_dict", "EVENT_TYPES",
    "BattleRuleError", "ProfileError", "Profile", "BattleState", "Press", "Question", "Ruling", "Theme",
    "Standings", "PlayerStanding", "ShootoutCall", "Event", "BattleSetUp", "ThemeStarted", "PriceAnnounced",
    "ReadingStarted", "ReadingFinished", "ReadingResumed", "ButtonPressed", "AnswererPointed", "ShortFormGiven",
    "ClarificationRequested", "AnswerTimeExtended", "AnswerJudged", "TimeCalled", "PressWindowExpired",
    "QuestionWithdrawn", "AnswerAnnounced", "RulingCorrected", "AppealLodged", "AppealDecided", "ModeChanged",
    "ActionUndone",
]
