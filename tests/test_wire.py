"""The one framing between the grader's processes (grader/sandbox/wire.py): a line of another kind, missing a
field or with one too many is refused as None (never an exception in the zygote's loop), no other module of the
processes' protocol writes or reads a JSON line of its own, and the zygote answers its typed messages. The
messages' types: tests/test_wire_types.py."""

import ast
import os
import socket
import time

from grader.sandbox import wire
from grader.sandbox.confine.policy import Caps
from grader.sandbox.host.client import Zygote
from grader.settings import Settings
from tests.conftest import ROOT


def test_a_line_that_is_not_a_whole_message_is_none():
    assert wire.unframe(b"not json") is None
    assert wire.unframe(b"[1, 2]") is None  # JSON, but not an object
    assert wire.Fork.from_wire(None) is None
    assert wire.Fork.from_wire({"kind": "Fork"}) is None  # a field missing
    assert wire.Fork.from_wire({"what": "session"}) is None  # no kind
    assert wire.Fork.from_wire({"kind": "Fork", "what": "session", "extra": 1}) is None  # a field it does not declare
    assert wire.Fork.from_wire({"kind": "Fork", "what": "session"}) == wire.Fork("session")


PROTOCOL = [ROOT / "grader" / "remote.py", *sorted((ROOT / "grader" / "sandbox").rglob("*.py")),
            *sorted((ROOT / "grader" / "batch").glob("*.py"))]


def _own_lines(path):
    """Places where a module writes a JSON line itself (json.dumps(...) + "\\n") or reads one (json.loads on a
    name called line)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Call)
                and ast.unparse(node.left.func) == "json.dumps" and ast.unparse(node.right) == "'\\n'"):
            found.append(node.lineno)
        if (isinstance(node, ast.Call) and ast.unparse(node.func) == "json.loads" and node.args
                and "line" in ast.unparse(node.args[0])):
            found.append(node.lineno)
    return found


def test_the_framing_is_written_once():
    assert _own_lines(ROOT / "grader" / "sandbox" / "wire.py")  # the scan sees the one place there is
    offenders = {str(p.relative_to(ROOT)): _own_lines(p) for p in PROTOCOL if p.name != "wire.py"}
    assert {p: lines for p, lines in offenders.items() if lines} == {}


def test_the_zygote_answers_its_typed_messages():
    """Hello first; Fork("session") with a socket beside it: Forked; AskEnded: WaitStatus, the real exit status
    once that session server is gone."""
    settings = Settings.from_env()
    zygote = Zygote(settings.sandbox_mode, settings.uid_base, settings.sandbox)
    try:
        caps = zygote.ready()
        assert isinstance(caps, dict) and caps["python"] and isinstance(zygote.hello.caps, Caps)
        ours, pid = zygote.fork_session()
        assert pid > 0
        ours.close()  # its grader is gone: the session server ends
        deadline, status = time.monotonic() + 30, None
        while status is None and time.monotonic() < deadline:
            status = zygote.how_it_ended(pid)
            time.sleep(0.1)
        assert status is not None and (os.WIFEXITED(status) or os.WIFSIGNALED(status)), status
        with socket.socket() as spare:
            zygote.channel.send(wire.Fork("a process it does not make"), fds=[spare.fileno()])
        assert wire.Forked.from_wire(zygote.channel.receive(time.monotonic() + 10)) is None  # refused
    finally:
        zygote.close()
