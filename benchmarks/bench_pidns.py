"""What a jail's PID namespace costs: grading one submission with and without it, side by side.

    python benchmarks/bench_pidns.py [--submission examples/complete] [--rounds 3]

Only the jailed modes (root-jail, user-jail) get a PID namespace. As root, a session's children live in the
session's namespace, whose init is forked once (jail.PidNamespace); in a user namespace each child runs as pid 2
below an init of its own (jail.enter_pid_namespace), two more forks of the torch-loaded fork server per exercise.
Both columns grade the same submission with the same zygote, alternately, after one warm-up
(the reference answers); "without" is the same machine with the PID namespace switched off (its caps'
`pidns` false: /proc is then the machine's, bound, as before). The load average is printed beside: run it
on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.grading import Grader  # noqa: E402
from grader.sandbox.host.client import Zygote  # noqa: E402
from grader.sandbox.host.session import Session  # noqa: E402
from grader.settings import Settings  # noqa: E402


class WithoutPidns:
    """The zygote, its capabilities saying no PID namespace can be made."""

    def __init__(self, real):
        self.real = real

    def ready(self):
        return {**self.real.ready(), "pidns": False}

    def session(self, settings, shared=None):
        return Session(self, settings, shared=shared)

    def __getattr__(self, name):
        return getattr(self.real, name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--submission", default=str(ROOT / "examples" / "complete"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = Settings.from_env()
    real = Zygote.start(settings)
    caps = real.ready()
    if not caps["pidns"]:
        sys.exit("no PID namespace can be made here (or the mode has no jail): nothing to compare")
    graders = {"with": Grader(settings, zygote=real), "without": Grader(settings, zygote=WithoutPidns(real))}
    graders["with"].grade(args.submission)  # warm-up: the reference answers
    seconds = {name: [] for name in graders}
    exercises = 0
    for _ in range(args.rounds):
        for name, grader in graders.items():
            start = time.perf_counter()
            grade = grader.grade(args.submission)
            seconds[name].append(time.perf_counter() - start)
            exercises = len({v.check.exercise for v in grade.verdicts})
    with_, without = statistics.median(seconds["with"]), statistics.median(seconds["without"])
    print(f"{args.submission}: {exercises} exercises, {args.rounds} rounds, load average "
          f"{os.getloadavg()[0]:.1f} before the last round")
    print("| PID namespace | grading one submission (median) | per exercise | ratio |")
    print("| --- | --- | --- | --- |")
    print(f"| without | {without:.2f} s | {1000 * without / exercises:.0f} ms | 1.00 |")
    print(f"| with | {with_:.2f} s | {1000 * with_ / exercises:.0f} ms | {with_ / without:.2f} |")


if __name__ == "__main__":
    main()
