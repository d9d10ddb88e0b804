"""The typed wire (grader/sandbox/wire.py): every message between the grader, the zygote, a session server, the
child and a batch's workers survives its line with its nested records (the policy, the capabilities) as
dataclasses, and decoding refuses, with an error that names the field, a value of the wrong type, a field the
message does not declare and one it lacks; a line past the framing's limit is dropped unread, and so is a result
line that is not one. Expected values come from the annotations, never from the decoder."""

import dataclasses
import socket
import types
import typing

import pytest

from grader.sandbox import wire
from grader.sandbox.confine.policy import Caps, Note, Policy
from grader.settings import SANDBOX
from tests.conftest import ROOT

MESSAGES = [cls for cls in vars(wire).values()
            if isinstance(cls, type) and issubclass(cls, wire._Message) and cls is not wire._Message]
SIMPLE = {str: "s", int: 7, float: 1.5, bool: True, type(None): None}


def _optional(hint):
    """X for X | None, else None."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        return next(a for a in args if a is not type(None))
    return None


def example(hint):
    """A value of type `hint` with every part filled in (an optional field holds a value, not None)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is wire.Json:
        return {"a": [1, 2.5, "x", None, True]}
    if _optional(hint) is not None:
        return example(_optional(hint))
    if hint in SIMPLE:
        return SIMPLE[hint]
    if origin is list:
        return [example(args[0])]
    if origin is tuple:
        return (example(args[0]),) if args[1:] == (Ellipsis,) else tuple(example(a) for a in args)
    if origin is dict:
        return {"k": example(args[1])}
    if origin in (typing.Union, types.UnionType):  # one of several kinds (a note's parameter): the first
        return example(args[0])
    assert dataclasses.is_dataclass(hint), hint
    hints = typing.get_type_hints(hint)
    return hint(**{f.name: example(hints[f.name]) for f in dataclasses.fields(hint)})


def wrong(hint):
    """A JSON value that is not of type `hint` (None where every JSON value is)."""
    if _optional(hint) is not None:
        return wrong(_optional(hint))
    origin = typing.get_origin(hint)
    table = {str: 7, int: "7", float: "1.5", bool: 1, list: {"a": 1}, tuple: {"a": 1}, dict: ["a"]}
    if hint in table or origin in table:
        return table.get(hint, table.get(origin))
    return None if hint is wire.Json else "not a record"


def _fields(cls):
    hints = typing.get_type_hints(cls)
    return [(f, hints[f.name]) for f in dataclasses.fields(cls)]


def _line(message):
    return wire.unframe(wire.frame(message).encode())


def test_every_field_is_typed_and_nothing_is_an_object():
    assert len(MESSAGES) >= 20  # the zygote's, the session's, the grading process's, the batch's
    for cls in MESSAGES + [Caps, Policy]:
        for f, hint in _fields(cls):
            assert hint not in (object, typing.Any, dict, list, tuple), (cls.__name__, f.name, hint)


def test_the_policy_and_the_capabilities_cross_as_records():
    hints = typing.get_type_hints(wire.RunJob)
    assert hints["policy"] is Policy and typing.get_type_hints(wire.Hello)["caps"] is Caps


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_every_message_round_trips_with_its_nested_records(cls):
    message = example(cls)
    line = wire.frame(message)
    assert line.endswith("\n") and line.count("\n") == 1
    back = cls.decode(wire.unframe(line.encode()))
    assert back == message
    for f, hint in _fields(cls):  # nested records come back as records, not dicts
        value = getattr(back, f.name)
        if dataclasses.is_dataclass(hint):
            assert type(value) is hint, (cls.__name__, f.name)
    assert [other for other in MESSAGES if other is not cls and other.from_wire(wire.unframe(line))] == []


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_a_field_of_the_wrong_type_is_refused_by_name(cls):
    checked = 0
    for f, hint in _fields(cls):
        bad = wrong(hint)
        if bad is None:
            continue
        data = {**_line(example(cls)), f.name: bad}
        with pytest.raises(wire.WireError, match=rf"{cls.__name__}\.{f.name}\b"):
            cls.decode(data)
        assert cls.from_wire(data) is None  # a process's loop sees a refusal, never an exception
        checked += 1
    assert checked or not dataclasses.fields(cls)


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_an_unknown_field_is_refused(cls):
    data = {**_line(example(cls)), "extra": 1}
    with pytest.raises(wire.WireError, match="unknown field.*extra"):
        cls.decode(data)
    assert cls.from_wire(data) is None


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_a_missing_field_is_refused(cls):
    required = [f.name for f, _ in _fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    for name in required:
        data = {k: v for k, v in _line(example(cls)).items() if k != name}
        with pytest.raises(wire.WireError, match=f"{name} is missing"):
            cls.decode(data)


def test_nested_records_are_checked_field_by_field():
    job = _line(example(wire.RunJob))
    cases = [
        ({**job, "policy": {**job["policy"], "uid": "0"}}, r"RunJob\.policy\.uid: expected int"),
        ({**job, "policy": {**job["policy"], "shell": True}}, r"RunJob\.policy: unknown field.*shell"),
        ({**job, "policy": {k: v for k, v in job["policy"].items() if k != "seccomp"}}, "seccomp is missing"),
        ({**job, "statements": [["label", "x = 1", "3"]]}, r"RunJob\.statements\[0\]\[2\]"),
        ({**job, "statements": [["label", "x = 1"]]}, r"RunJob\.statements\[0\]"),
        ({**job, "tokens": ["t", 3]}, r"RunJob\.tokens\[1\]"),
        ({**job, "policy": {**job["policy"], "binds": ["/usr", None]}}, r"RunJob\.policy\.binds\[1\]"),
        ({**job, "policy": {**job["policy"], "notes": [{"id": "{y}", "params": {"y": {"id": 3, "params": {}}}}]}},
         r"RunJob\.policy\.notes\[0\]\.params\['y'\]"),  # a note's note: checked too
    ]
    for data, error in cases:
        with pytest.raises(wire.WireError, match=error):
            wire.RunJob.decode(data)
    hello = _line(example(wire.Hello))
    with pytest.raises(wire.WireError, match=r"Hello\.caps\.landlock"):
        wire.Hello.decode({**hello, "caps": {**hello["caps"], "landlock": "7"}})


def test_a_policys_notes_cross_as_notes_nested_whole():
    """The policy's notes are message data (policy.Note: an id, its parameters, notes among them)."""
    note = Note("{why}: ran as uid {uid}", {"why": Note("no {what} here", {"what": "jail"}), "uid": 61005})
    job = example(wire.RunJob)
    job.policy = dataclasses.replace(job.policy, notes=(note,))
    back = wire.RunJob.decode(_line(job))
    assert back.policy.notes == (note,) and type(back.policy.notes[0].params["why"]) is Note
    assert str(back.policy.notes[0]) == "no jail here: ran as uid 61005"


def test_a_bool_is_not_an_int_and_an_int_is_not_a_bool():
    with pytest.raises(wire.WireError, match=r"Forked\.pid: expected int, got bool"):
        wire.Forked.decode({"kind": "Forked", "pid": True})
    with pytest.raises(wire.WireError, match=r"CallReady\.stored: expected bool, got int"):
        wire.CallReady.decode({"kind": "CallReady", "stored": 1})
    assert wire.GradeReply.decode({"kind": "GradeReply", "student": "a", "ok": True, "total": 5}).total == 5


def test_another_kind_is_refused():
    with pytest.raises(wire.WireError, match="not a Fork"):
        wire.Fork.decode({"kind": "Forked", "pid": 1})
    with pytest.raises(wire.WireError, match="not a Fork"):
        wire.Fork.decode(["Fork"])


def test_an_oversized_frame_is_dropped_and_the_next_line_read():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        channel = wire.Channel(ours, max_bytes=1000)
        theirs.sendall(wire.frame(wire.Fork("s" * 5000)).encode() + wire.frame(wire.Forked(3)).encode())
        assert channel.receive() is None and channel.lines.dropped == 1 and not channel.closed
        assert wire.Forked.from_wire(channel.receive()) == wire.Forked(3)
        theirs.sendall(wire.frame(wire.Fork("s" * 900)).encode())  # within the limit
        assert wire.Fork.from_wire(channel.receive()) == wire.Fork("s" * 900)
    assert SANDBOX.frame_bytes >= 32 << 20  # a submission's code fits in its RunJob


def test_lines_drop_an_endless_line_fed_in_pieces():
    lines = wire.Lines(10)
    for piece in (b"0123456", b"789abcdef", b"xyz\nok\n"):
        lines.feed(piece)
    assert lines.next() is wire.TOO_LONG and lines.next() == b"ok" and lines.next() is None and lines.dropped == 1
    lines.feed(b"0123456789abc\nfits\n")  # too long though whole: dropped too
    assert lines.next() is wire.TOO_LONG and lines.next() == b"fits" and lines.dropped == 2


def test_result_lines_round_trip_and_garbage_is_refused():
    payload = bytes(range(256)) + b"\n\t"
    line = wire.result_line("tok.json", payload)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert wire.parse_result_line(line[:-1]) == ("tok.json", payload)
    for garbage in (b"tok.json\tnot base64!", "tök\tAAAA".encode(), b"\xff\xfe\tAAAA"):
        assert wire.parse_result_line(garbage) is None


def _code_literals(path, code):
    """Lines of `path` that exit with `code` written as a number, or compare a value with it."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        operands = (node.args if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("_exit")
                    else [node.left, *node.comparators] if isinstance(node, ast.Compare) else [])
        found += [node.lineno for o in operands if isinstance(o, ast.Constant) and o.value == code]
    return found


def test_exit_codes_are_written_once(tmp_path):
    """The code a child exits with when it cannot be confined is wire's constant: no other file of the grader
    exits with 97 or compares a status with it."""
    offenders = {str(p.relative_to(ROOT)): lines for p in sorted((ROOT / "grader").rglob("*.py"))
                 if p.name != "wire.py" and (lines := _code_literals(p, wire.EXIT_SETUP_FAILED))}
    assert offenders == {}
    (tmp_path / "m.py").write_text("os._exit(97)\nif code == 97:\n    pass\nSECCOMP = 97\n")
    assert _code_literals(tmp_path / "m.py", 97) == [1, 2]  # the scan sees both forms, not a table's number
