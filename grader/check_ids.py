"""The lock of check ids: once a check key is released, it keeps its meaning forever.

grader/checks/ids.lock.json maps every key ('<exercise>.<id>') to the digest of what the check asks
(`Check.meaning()`: exercise, probe, inputs, expectation). A key may be added; it may never change
meaning or disappear, because gradebooks, per-student feedback, self-check data and Gradescope test
names of earlier runs refer to it. To change what a check asks, give it a new id; to drop a check,
mark its entry `"retired": true` by hand (the key is then never reused).
"""

from __future__ import annotations

import json
from pathlib import Path

LOCK = Path(__file__).resolve().parent / "checks" / "ids.lock.json"


def load(path=LOCK):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}


def problems(checks, lock):
    """What breaks the lock: a locked key that is gone or asks something else, or a new key not locked yet."""
    current = {c.key: c.meaning() for c in checks}
    out = []
    for key, entry in sorted(lock.items()):
        if entry.get("retired"):
            if key in current:
                out.append(f"{key} is retired in the lock but a check uses it again: choose a new id")
        elif key not in current:
            out.append(f"{key} disappeared: keep the check, or mark its lock entry \"retired\": true")
        elif current[key] != entry["meaning"]:
            out.append(f"{key} changed meaning (probe, inputs or expectation): give the changed check a new id")
    out += [f"{key} is not in the lock yet: run `python -m grader build`" for key in sorted(set(current) - set(lock))]
    return out


def updated(checks, lock):
    """The lock with every new key added; existing entries are never touched."""
    new = dict(lock)
    for c in checks:
        new.setdefault(c.key, {"meaning": c.meaning()})
    return dict(sorted(new.items()))


def dumps(lock):
    return json.dumps(lock, indent=1, sort_keys=True) + "\n"
