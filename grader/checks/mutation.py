"""Checks of a learner's property test, graded by mutation (chapter 4's `check_relative_property`, chapter 8's
`check_axial_property`): the test is run on candidate implementations, correct ones to accept and broken
ones to reject, and its verdicts are compared with what a correct test answers. Each chapter describes its
catalogue in a `Catalogue` and builds its checks here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from grader.spec import Check, draw_choice, pairs, same, shuffled, unseen_like


@dataclass(frozen=True)
class Catalogue:
    exercise: str  # the learner's property test
    probe: str  # runs it on named candidates
    property: str  # judges its verdicts
    good: str  # the public anchors, asked about in every public check
    bad: str
    accept: dict  # hidden correct candidates: {name: description}
    reject: dict  # hidden broken ones
    about: dict  # every candidate's description, public ones included
    noun: str  # what a candidate is, in words ("RoPE")

    def hidden_anchors(self, name):
        """A hidden correct and a hidden broken candidate other than `name`: a hidden check's anchors. Public
        anchors would not do there: their code ships with the course, so a test could recognise them by their
        output and answer a constant for the one it does not know."""
        good = [n for n in self.accept if n != name]
        bad = [n for n in self.reject if n != name]
        n = sum(map(ord, name))
        return good[n % len(good)], bad[n % len(bad)]

    def verdict_check(self, name, want, head_dim=64, points=1.0, public=False):
        """The learner's test on one candidate and on two anchors, a correct and a broken one (so a constant
        answer scores nothing), in an order that says nothing about which is which."""
        good, bad = (self.good, self.bad) if public else self.hidden_anchors(name)
        expected = {name: want, good: True, bad: False}
        order = list(expected)
        if not public:
            order.sort(key=lambda n: hashlib.sha256(f"{name}/{n}".encode()).hexdigest())
        verb = "accepts" if want else "rejects"
        title = f"{verb} {self.about[name]}" + (f" (head_dim={head_dim})" if head_dim != 64 else "")
        check_id = f"{verb}_{name}" + (f"_head_dim_{head_dim}" if head_dim != 64 else "")
        check_id += "" if public else "_among_hidden"
        return Check(self.exercise, title, self.probe, {"candidates": order, "head_dim": head_dim},
                     expect="property", property=self.property,
                     property_params={"expected": expected, "about": {n: self.about[n] for n in expected}},
                     points=points, public=public, id=check_id, twin=(self.twin(head_dim),))

    def twin(self, head_dim):
        """A verdict check's twin (grader/twins.py): the learner's test on every hidden candidate, correct and broken,
        in an order drawn for each student. The test must judge each as a correct test does; a constant answer fails,
        and a guess passes with probability 1 / C(n, k) (k correct among n: 1 / 43758 for 8 of 18)."""
        names = list(self.accept) + list(self.reject)
        return Check(self.exercise, f"tells every hidden {self.noun} apart", self.probe,
                     {"candidates": shuffled(*names), "head_dim": head_dim}, expect="property", property=self.property,
                     property_params={"expected": {n: n in self.accept for n in names},
                                      "about": {n: self.about[n] for n in names}}, id=f"twin_head_dim_{head_dim}")

    def main_check(self):
        """The main check: three correct and three broken candidates from the hidden catalogues (distinct: each
        drawn from its own third), in an order drawn for each submission, so a guess passes with probability
        1/20; their descriptions stay hidden (the feedback names only "the correct one, 2 of 3")."""
        names = [f"good{n}" for n in (1, 2, 3)] + [f"bad{n}" for n in (1, 2, 3)]
        candidates = shuffled(*[draw_choice(*list(self.accept)[n::3], name=f"good{n + 1}") for n in range(3)],
                              *[draw_choice(*list(self.reject)[n::3], name=f"bad{n + 1}") for n in range(3)])
        about = [(same(n), f"the {'correct' if n.startswith('good') else 'broken'} {self.noun} drawn for this "
                           f"submission ({n[-1]} of 3)") for n in names]
        return unseen_like(self.verdict_check(self.good, True, public=True),
                           {"candidates": candidates, "head_dim": draw_choice(16, 32, 64)},
                           f"tells three correct {self.noun}s from three broken ones, all drawn for this submission",
                           id="main_verdicts",
                           property_params={"expected": pairs(*[(same(n), n.startswith("good")) for n in names]),
                                            "about": pairs(*about)})
