"""The zygote's runtime folder: the files it runs from, listed one by one, copied flat into a fresh folder
(nothing that knows any answer: the sandbox's own modules, the public probes and the store format, the hidden
probes that run learner code). The hidden candidate functions a property test is run on are not among them:
the grader computes them in its own process (grader/candidates.py, sandbox/candidate_calls.py).

tests/test_architecture.py checks that RUNTIME_FILES is exactly what server.py imports, directly or not.
"""

from __future__ import annotations

from pathlib import Path

from .. import hidden_probes

HERE = Path(__file__).resolve().parent
PUBLIC = HERE.parent.parent / "posenc_selfcheck"

SANDBOX_FILES = ("server.py", "bootstrap.py", "session_server.py", "child.py", "candidate_calls.py", "sigchld.py",
                 "cleanup.py", "confine.py", "jail.py", "landlock.py", "seccomp.py", "cgroup.py", "kernel.py",
                 "paths.py", "probe.py", "procs.py", "policy.py", "wire.py")
PUBLIC_FILES = ("store.py", "probes_base.py", "probes.py", "probes_ch03.py", "probes_ch04.py", "probes_ch05.py",
                "probes_ch06.py", "probes_ch07.py", "probes_ch08.py", "probes_meta.py")
RUNTIME_FILES = (tuple(HERE / name for name in SANDBOX_FILES) + tuple(PUBLIC / name for name in PUBLIC_FILES)
                 + tuple(hidden_probes.FILES))

_names = [p.name for p in RUNTIME_FILES]  # copied flat into one folder: a repeated name would be lost
if len(set(_names)) != len(_names):
    raise RuntimeError(f"sandbox runtime files share a name: {sorted(n for n in _names if _names.count(n) > 1)}; "
                       "name hidden probe files probes_chNN_hidden.py")


def copy_into(folder):
    """Write the runtime files into `folder`."""
    for path in RUNTIME_FILES:
        (folder / path.name).write_text(path.read_text())
