"""The stateful adversary's harness (bench/adversary.py) on a fake box: no processes, no browser, a second or two.

A 30-minute ``./dev bench chaos`` ended with one harness error, hypothesis's ``FlakyStrategyDefinition``: the time
limit raised in the machine's constructor, before the example's first draw, on a tree of choices whose root had
drawn before. These tests drive the same machine and the same rounds over a fake adversary whose live state
(what the view allows, who is in the audience) changes at random, as a real box's does between two runs.
"""

from __future__ import annotations

import random
import time

from bench.adversary import TAPS, Figures, Violation, machine, run_rounds


class FakeAdversary:
    """Every action of :class:`bench.adversary.Adversary`, answered from a random state nobody can predict."""

    def __init__(self, browser, folder, figures: Figures, *, fail_on_tap: int | None = None,
                 example_s: float = 0.0) -> None:
        self.figures = figures
        self.random = random.Random()  # seeded from the OS: two runs of one example see different boxes
        self.audience: list[str] = []
        self.host = self
        self.taps = 0
        self.fail_on_tap = fail_on_tap
        self.example_s = example_s
        self.closed = False

    # the host socket's snapshot: a different verdict for each tap every time it is asked
    def fresh(self) -> dict:
        return {"seq": 0, "view": {"allowed": {name: None if self.random.random() < 0.5 else {"ru": "нет", "en": "no"}
                                               for name in TAPS}}}

    def setup(self, kind: str) -> None:
        time.sleep(self.example_s)

    def tap(self, name: str) -> None:
        self.taps += 1
        if self.taps == self.fail_on_tap:
            raise Violation("tap", f"a tap on «{name}» was silently dropped (the fake's)")

    def check(self) -> None:
        self.figures.steps += 1

    def restart(self, which: str, kill: bool) -> None:
        if self.random.random() < 0.5:  # a client that did not come back: the audience is empty now
            self.audience.clear()

    def audience_connect(self, namespace: str) -> None:
        if self.random.random() < 0.5:
            self.audience.append(namespace)

    def audience_reconnect(self, index: int) -> None:
        if self.audience:
            self.audience.pop(index % len(self.audience))

    def refused_command(self, name: str) -> None: ...

    def press(self, player: int) -> None: ...

    def phones(self, enabled: bool) -> None: ...

    def host_reload(self) -> None: ...

    def withdraw_declined(self, escape: bool) -> None: ...

    def close(self) -> None:
        assert not self.closed, "closed twice"
        self.closed = True


def fake(**options):
    return lambda browser, folder, figures: FakeAdversary(browser, folder, figures, **options)


def test_the_time_limit_ends_a_run_without_a_harness_error(tmp_path):
    """The run stops by its clock in the middle of a round (50 examples of 50 ms each at least): with the time limit raised
    before the first draw, hypothesis answered FlakyStrategyDefinition, counted as a harness error."""
    figures = Figures()
    started = time.monotonic()
    run_rounds(lambda ends: machine(None, figures, tmp_path, ends=ends, adversary=fake(example_s=0.05)),
               figures, seconds=3, steps_per_example=5, log=lambda line: None, examples_per_round=50)
    took = time.monotonic() - started
    assert figures.violations == {}, figures.first_violations
    assert figures.examples >= 2 and figures.steps >= figures.examples * 5, figures
    assert took < 3 + 15, took  # the examples after the time go by at once


def test_the_draws_do_not_depend_on_the_live_box(tmp_path):
    """What the view allows and whether an audience is there change at random between two runs of one prefix:
    hypothesis walks its tree of choices through every example and refused the run when a rule's precondition
    (an audience to reconnect) made the draws after one prefix differ (the old machine: 10 rounds of 10 failed)."""
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    figures = Figures()
    run_state_machine_as_test(machine(None, figures, tmp_path, adversary=fake()), settings=settings(
        max_examples=200, stateful_step_count=20, deadline=None, database=None, phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck), report_multiple_bugs=False))
    assert figures.violations == {}, figures.first_violations
    assert figures.examples >= 200, figures


def test_a_violation_is_counted_once_with_its_steps_and_the_run_goes_on(tmp_path):
    figures = Figures()
    lines: list[str] = []
    run_rounds(lambda ends: machine(None, figures, tmp_path, ends=ends, adversary=fake(fail_on_tap=3)),
               figures, seconds=2, steps_per_example=20, log=lines.append, examples_per_round=20)
    assert figures.violations["tap"] >= 1 and figures.violations["harness"] == 0, figures.first_violations
    assert set(figures.violations) == {"tap"}, figures.violations
    first = figures.first_violations[0]
    assert "silently dropped" in first and "steps: setup('plain'); check(); " in first, first
    assert lines, "each failing round is logged"
