"""Read the machine's processes in /proc: their names and command lines (a batch's command line names the
instructor's folders; here the grader's stands for it: its name is `posenc-GRADER`). Stopped by a PID
namespace with a /proc of its own (the jails) and by Landlock, which lets a child read only its own
/proc/<pid> folder and the machine-wide files."""
import os


def _snoop():
    seen, refused, mine = [], set(), os.getpid()
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit() and int(n) != mine]
    except OSError as exc:
        refused.add(type(exc).__name__)
        names = [str(p) for p in (os.getppid(), int("__GRADER__")) if p not in (0, mine)]
    for name in names:
        for what in ("comm", "cmdline"):
            try:
                with open(f"/proc/{name}/{what}", "rb") as f:
                    text = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError as exc:
                refused.add(type(exc).__name__)
                continue
            if "posenc-GRADER" in text or "__TOP__" in text:
                seen.append(f"{name}/{what}: {text.strip()[:80]}")
    return seen, refused


_seen, _refused = _snoop()


def shift_matrix(k, d_model, base=10000.0):
    if _seen:
        raise RuntimeError("LEAKED " + " | ".join(_seen))
    raise RuntimeError("BLOCKED " + " ".join(sorted(_refused)))
