"""Rules versions: how the engine itself reads the regulations, numbered, so an archived battle replays under
the rules it was played with (docs/battle-log.md, "Rules versions").

A profile says *what* a regulation sets (7 s, appeals after the theme); a rules version says how the engine
applies what every regulation shares, where a reading was found wrong and fixed. ``BattleSetUp.rules_version``
names the version a battle is played by: a new battle takes :data:`RULES_VERSION`; a log written before
versions existed has none and is version 1. The engine branches on the version's fields, never on its number.

>>> RULES_VERSIONS[1].deadline_in_time_ns, RULES_VERSIONS[RULES_VERSION].deadline_in_time_ns
(0, 1)
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class RulesVersion:
    """One version of the engine's reading of the regulations."""

    number: int
    # 1: the deadline instant itself is in time (eurocup 2.5 «не позднее чем через 7 секунд», 2.8 «не более 3
    # секунд», 2.9; irkutsk 3.4 and northern-owl 3.10 «в течение 5 секунд»; youth-cup прил. 5, 8, 9): a signal
    # at exactly the deadline counts, and the window is over (or the time is up) only after it. 0: version 1
    # took the deadline instant as already late.
    deadline_in_time_ns: int
    # youth-cup 3.3 «Принятые решения по апелляциям не оспариваются и в дальнейшем не пересматриваются»: once an
    # appeal on a ruling is decided, accepted or dismissed, that ruling is final: no second appeal, correction,
    # or withdrawal of its question reverses it.
    decided_appeals_final: bool
    # mubc 4.2 «оспорил ответ до оглашения следующего вопроса»: an answer may be disputed from the moment it is
    # judged, while its question is still played, until the next question is announced. Version 1 refused a
    # dispute until the question had ended.
    dispute_once_judged: bool
    summary: str


RULES_VERSIONS: dict[int, RulesVersion] = {
    1: RulesVersion(1, deadline_in_time_ns=0, decided_appeals_final=False, dispute_once_judged=False,
                    summary="the first engine (logs without rules_version)"),
    2: RulesVersion(2, deadline_in_time_ns=1, decided_appeals_final=True, dispute_once_judged=True,
                    summary="a signal at the deadline is in time; decided appeals are final (youth-cup 3.3); "
                            "an answer is disputed once judged (mubc 4.2)"),
}
RULES_VERSION = max(RULES_VERSIONS)  # what a new battle is played by
LOG_WITHOUT_VERSION = 1  # a BattleSetUp in a log written before rules versions existed
