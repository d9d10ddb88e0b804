"""The zygote's runtime folder: the files it runs from, listed one by one, copied flat into a fresh folder
(nothing that knows any answer: the sandbox's own modules, the public probes and the store format, the hidden
probe catalogue), with the candidate functions of the probe files renamed (anonymize.py).

tests/test_architecture.py checks that RUNTIME_FILES is exactly what server.py imports, directly or not.
"""

from __future__ import annotations

from pathlib import Path

from .. import hidden_probes
from . import anonymize

HERE = Path(__file__).resolve().parent
PUBLIC = HERE.parent.parent / "posenc_selfcheck"

SANDBOX_FILES = ("server.py", "bootstrap.py", "session_server.py", "child.py", "sigchld.py", "cleanup.py",
                 "confine.py", "jail.py", "landlock.py", "seccomp.py", "cgroup.py", "kernel.py", "paths.py",
                 "probe.py", "procs.py", "policy.py", "wire.py")
PUBLIC_FILES = ("store.py", "probes_base.py", "probes.py", "probes_ch03.py", "probes_ch04.py", "probes_ch05.py",
                "probes_ch06.py", "probes_ch07.py", "probes_ch08.py", "probes_meta.py")
RUNTIME_FILES = (tuple(HERE / name for name in SANDBOX_FILES) + tuple(PUBLIC / name for name in PUBLIC_FILES)
                 + tuple(hidden_probes.FILES))

_names = [p.name for p in RUNTIME_FILES]  # copied flat into one folder: a repeated name would be lost
if len(set(_names)) != len(_names):
    raise RuntimeError(f"sandbox runtime files share a name: {sorted(n for n in _names if _names.count(n) > 1)}; "
                       "name hidden probe files probes_chNN_hidden.py")


def copy_into(folder, secret):
    """Write the runtime files into `folder`, the probe files' candidates renamed with `secret`; the anonymous
    names ({name: anonymous}), which the grader maps in and out."""
    sources = {path: path.read_text() for path in RUNTIME_FILES}
    probe_files = {path: text for path, text in sources.items() if path.name.startswith("probes")}
    anonymous = anonymize.anonymous_names(
        [n for text in probe_files.values() for n in anonymize.candidate_names(text)], secret)
    for path, text in sources.items():
        if path.name.startswith("probes") and anonymize.candidate_names(text):
            text = anonymize.rewrite(text, anonymous, secret)
        (folder / path.name).write_text(text)
    return anonymous
