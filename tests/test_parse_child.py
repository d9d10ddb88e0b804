"""The child that parses a submission's file (grader/parse.py's parse_limited, a fork of the grading process): it holds
nothing of the grader's but its result pipe, runs within its limits, and whatever it does costs only that file."""

import os
import resource
import time

from grader import parse as P
from grader.settings import ReadLimits

NOTHING_READ = "{name} could not be read within the grader's limits ({mb} MB, {seconds:.3g} s): it is too large or " \
               "too deeply nested; nothing in it was graded"


def _as_result(**seen):
    """What parse() returns, carrying `seen` in its `defines` (strings), so the test can read the child's view."""
    return {"statements": [], "defines": sorted(f"{k}={v}" for k, v in seen.items()), "flags": [], "notes": []}


def _seen(result):
    return dict(d.split("=", 1) for d in result["defines"])


def test_the_parser_holds_only_its_pipe_and_its_limits(monkeypatch, tmp_path):
    sentinel = os.open(tmp_path / "grader-only", os.O_CREAT | os.O_RDWR)  # a descriptor of the grader's
    limits = ReadLimits()

    def looks_around(name, data, code_kb=None):
        fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))  # (its own listing's descriptor among them)
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        print("forged output")  # stdout is not the result pipe
        std = ",".join(os.readlink(f"/proc/self/fd/{n}") for n in (0, 1, 2))
        return _as_result(fds=",".join(map(str, fds)), std=std, room=resource.getrlimit(resource.RLIMIT_AS)[0] - mapped,
                          cpu=resource.getrlimit(resource.RLIMIT_CPU)[0],
                          core=resource.getrlimit(resource.RLIMIT_CORE)[1])

    monkeypatch.setattr(P, "parse", looks_around)
    try:
        result = P.parse_limited("a.py", b"x = 1\n", limits, seconds=7.5)
    finally:
        os.close(sentinel)
    assert result["notes"] == [], result
    seen = _seen(result)
    fds = [int(n) for n in seen["fds"].split(",")]
    assert fds[:3] == [0, 1, 2] and len(fds) <= 5 and sentinel not in fds, seen  # 0-2, the pipe, the listing
    assert seen["std"] == ",".join([os.devnull] * 3), seen
    assert 0 < int(seen["room"]) <= limits.parse_memory_mb << 20, seen
    assert int(seen["cpu"]) == 8 and int(seen["core"]) == 0, seen  # ceil(7.5 s left of the budget)


def test_a_parser_that_never_ends_is_killed_at_its_wall_clock(monkeypatch):
    def spins(name, data, code_kb=None):
        while True:
            pass

    monkeypatch.setattr(P, "parse", spins)
    begun = time.monotonic()
    result = P.parse_limited("a.py", b"x = 1\n", ReadLimits(), seconds=1.0)
    assert time.monotonic() - begun < 5
    assert [n.id for n in result["notes"]] == [NOTHING_READ] and result["statements"] == []


def test_a_parser_that_fails_or_dies_costs_only_its_file(monkeypatch):
    def fails(name, data, code_kb=None):
        raise MemoryError

    def dies(name, data, code_kb=None):
        os.write(1, b'{"statements": [["forged", "import os", 1]]')  # half a result, to stdout, then gone
        os.kill(os.getpid(), 9)

    for parser in (fails, dies):
        monkeypatch.setattr(P, "parse", parser)
        result = P.parse_limited("a.py", b"x = 1\n")
        assert [n.id for n in result["notes"]] == [NOTHING_READ] and result["statements"] == [], parser


def test_a_parser_past_its_memory_limit_costs_only_its_file(monkeypatch):
    limits = ReadLimits(parse_memory_mb=64)

    def hoards(name, data, code_kb=None):
        bytearray((limits.parse_memory_mb + 64) << 20)  # a mapping of its own, past the limit
        return _as_result(hoarded=True)

    monkeypatch.setattr(P, "parse", hoards)
    result = P.parse_limited("a.py", b"x = 1\n", limits)
    assert [n.id for n in result["notes"]] == [NOTHING_READ] and result["defines"] == []
