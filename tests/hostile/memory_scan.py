"""Scan this process's own memory for secrets it was never given: a classmate's code graded earlier by
the same grader process, and the instructor's folders. The secrets are found by their SHA-256 only
(the digests are filled in; the values never appear in this file). (Found against the shared fork
server of `batch`: a child could read an earlier student's source from its own memory.) Stopped by
forking every submission's session from a zygote that never holds a submission, and by passing no
instructor path into the child."""
import ctypes
import hashlib
import re

_DIGESTS = {__DIGESTS__}  # noqa: F821 (filled in: {sha256 hex: label})
_MINE = "CANARY:__MINE__"  # this submission's own canary: the scan must find it (the control)
_PATTERN = re.compile(rb"CANARY:([0-9a-f]{32})")


def _regions():
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            span, perms = fields[0], fields[1]
            path = fields[5] if len(fields) > 5 else ""
            if perms.startswith("r") and (not path or path.startswith("[heap")):
                start, end = (int(x, 16) for x in span.split("-"))
                yield start, end


def _scan():
    found = set()
    for start, end in list(_regions()):  # read directly: these pages are mapped and readable
        data = ctypes.string_at(start, end - start)
        for match in _PATTERN.finditer(data):
            label = _DIGESTS.get(hashlib.sha256(match.group(1)).hexdigest())
            if label:
                found.add(label)
    return found


def shift_matrix(k, d_model, base=10000.0):
    raise RuntimeError("FOUND " + " ".join(sorted(_scan())))
