"""The sandbox's probes (probe.py), clean-up helpers (cleanup.py) and Landlock's view of /etc, each tried in forked
children under an unused uid."""

from __future__ import annotations

import ctypes
import os
import pwd
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox import procs
from grader.sandbox.confine import confine, jail, kernel, landlock
from grader.sandbox.paths import DEVICES, SYSTEM_PATHS, python_paths, within, without
from grader.sandbox.runtime import cleanup, probe
from grader.settings import SandboxTimings, Settings

# a uid no account has, standing for a grading user who is not root: outside the uids the sandbox borrows (uid_base
# and the uid_slots above it) and the ones test_sandbox_mechanisms.py runs zygotes as, so that a test worker's clean-up
# of this uid's files in /tmp never meets another worker's sandbox (it once removed a zygote's probe folder)
USER = Settings().uid_base + SandboxTimings().uid_slots + 1


@pytest.fixture(autouse=True)
def as_root():
    if os.geteuid() != 0:
        pytest.skip("needs root (the helpers are tried under an unused uid)")
    try:
        pwd.getpwuid(USER)
        pytest.skip(f"uid {USER} belongs to an account here")
    except KeyError:
        pass


@pytest.fixture
def shared_tmp():
    """A temporary folder other users can reach (pytest's tmp_path lies below a private folder)."""
    folder = Path(tempfile.mkdtemp(prefix="posenc-test-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_user(fn, uid=USER):
    """fn() in a forked child that became `uid` with no groups; its exit code (0: fn returned truthy)."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            confine.drop_to(uid, uid)
            code = 0 if fn() else 1
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_the_user_namespace_probe_agrees_with_the_kernel():
    """What this kernel allows a user that is not root; the probe says the same (it also binds, chroots
    and drops capabilities: it may say no where a bare unshare works, never yes where it fails)."""
    libc = ctypes.CDLL(None, use_errno=True)
    system = [p for p in SYSTEM_PATHS if os.path.exists(p)]
    allowed = as_user(lambda: libc.unshare(kernel.CLONE_NEWUSER | kernel.CLONE_NEWNS) == 0) == 0
    probed = as_user(lambda: probe.can_userns_jail(system)) == 0
    assert probed <= allowed
    if allowed:
        assert probed, "unprivileged user namespaces work here, but the jail could not be built in one"
    print(f"unprivileged user namespaces: {allowed}; user-namespace jail: {probed}")


def test_unreadable_by_tries_the_uid_for_real(shared_tmp):
    tmp_path = shared_tmp
    open_ = tmp_path / "open"
    shut = tmp_path / "shut"
    for folder, mode in ((open_, 0o755), (shut, 0o700)):
        (folder / "lib").mkdir(parents=True)
        os.chmod(folder, mode)
    paths = [str(open_ / "lib"), str(shut / "lib")]
    assert probe.unreadable_by(USER, paths) == [str(shut / "lib")]
    assert probe.unreadable_by(0, paths) == []


def test_leftover_system_v_objects_are_removed():
    def make():
        libc = ctypes.CDLL(None, use_errno=True)
        return min(libc.shmget(0, 1 << 20, 0o1600), libc.semget(0, 2, 0o1600), libc.msgget(0, 0o1600)) >= 0

    assert as_user(make) == 0
    assert as_user(make) == 0
    made = cleanup.sysv_ipc(USER)
    assert {kind for kind, _ in made} == {"shm", "sem", "msg"} and len(made) == 6
    keep = {ident for ident in made if ident[0] == "shm"}
    assert cleanup.remove_sysv_ipc(USER, keep=keep) == set()
    assert cleanup.sysv_ipc(USER) == keep
    assert cleanup.remove_sysv_ipc(USER) == set() and cleanup.sysv_ipc(USER) == set()


def test_files_of_the_sandbox_uid_in_temporary_folders_are_removed():
    names = [f"posenc-left-{os.getpid()}-{n}" for n in range(3)]

    def leave():
        Path("/tmp", names[0]).write_text("x")
        os.makedirs(f"/tmp/{names[1]}/deep")
        os.symlink("/etc/passwd", f"/tmp/{names[2]}")
        return True

    mine = Path(tempfile.gettempdir(), f"posenc-mine-{os.getpid()}")
    mine.write_text("the grader's own")
    try:
        assert as_user(leave) == 0
        removed = cleanup.remove_files_of(USER, folders=("/tmp",))
        assert sorted(removed) == sorted(f"/tmp/{n}" for n in names)
        assert not any(os.path.lexists(f"/tmp/{n}") for n in names) and os.path.exists("/etc/passwd")
        assert mine.exists()
        with pytest.raises(ValueError):
            cleanup.remove_files_of(os.getuid())
    finally:
        mine.unlink()
        for n in names:
            if os.path.isdir(f"/tmp/{n}"):
                shutil.rmtree(f"/tmp/{n}")
            elif os.path.lexists(f"/tmp/{n}"):
                os.unlink(f"/tmp/{n}")


def test_landlock_reads_of_etc_leave_out_its_secrets():
    entries = without(["/usr", "/etc"], landlock.withheld())
    assert entries[0] == "/usr" and "/etc/passwd" in entries and "/etc" not in entries
    assert not {"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh"} & set(entries)
    kept = [n for n in os.listdir("/etc") if n not in landlock.ETC_WITHHELD
            and not any(within(os.path.realpath(f"/etc/{n}"), w) for w in landlock.withheld())]
    assert len(entries) == 1 + len(kept)


def test_a_withheld_file_is_cut_out_of_the_folders_around_it_and_of_links_to_it(tmp_path):
    """The grader's secret below a readable folder: that folder is allowed as its entries, down to the
    secret's siblings; a link to the secret, or to a folder holding it, is left out."""
    secret = tmp_path / "etc" / "posenc" / "secret"
    secret.parent.mkdir(parents=True)
    secret.write_bytes(b"x" * 32)
    (tmp_path / "etc" / "posenc" / "sibling").write_text("")
    (tmp_path / "etc" / "passwd").write_text("")
    (tmp_path / "etc" / "to-secret").symlink_to(secret)
    (tmp_path / "etc" / "to-folder").symlink_to(secret.parent)
    (tmp_path / "usr").mkdir()
    entries = without([str(tmp_path / "etc"), str(tmp_path / "usr")], [str(secret)])
    assert set(entries) == {str(tmp_path / p) for p in ("etc/passwd", "etc/posenc/sibling", "usr")}
    assert without([str(secret)], [str(secret)]) == [] and without([str(tmp_path)], []) == [str(tmp_path)]


def test_a_withheld_file_in_a_folder_the_child_cannot_list_leaves_that_folder_out(shared_tmp):
    """A root grader's secret in /etc/posenc (0700, root's): Landlock's rules are made after the child took its
    own uid, which cannot list that folder. The folder is left out (its files were unreadable to the child
    anyway); the rest is allowed, and the rules are made (it once failed the child's set-up)."""
    (shared_tmp / "etc" / "posenc").mkdir(parents=True)
    (shared_tmp / "etc" / "posenc" / "secret").write_bytes(b"x" * 32)
    (shared_tmp / "etc" / "passwd").write_text("")
    os.chmod(shared_tmp / "etc", 0o755)
    os.chmod(shared_tmp / "etc" / "posenc", 0o700)
    expected = [str(shared_tmp / "etc" / "passwd")]
    assert as_user(lambda: without([str(shared_tmp / "etc")], [str(shared_tmp / "etc" / "posenc" / "secret")])
                   == expected) == 0


def test_the_jail_covers_a_withheld_file_and_folder_and_holds_no_terminal(shared_tmp):
    """In the jail, a withheld file or folder below a bound folder is an empty one nobody may read (its siblings
    stay readable), and /dev holds the devices asked for and no terminal (it once bound the machine's /dev)."""
    if not probe.can_jail():
        pytest.skip("no mount namespaces here")
    system = [p for p in SYSTEM_PATHS if os.path.exists(p)] + python_paths()
    (shared_tmp / "sys" / "keys").mkdir(parents=True)
    for name, text in (("keys/k", "KEY"), ("file", "SECRET"), ("open", "OPEN")):
        (shared_tmp / "sys" / name).write_text(text)
        os.chmod(shared_tmp / "sys" / name, 0o644)
    for sub in ("jail", "stub"):
        (shared_tmp / sub).mkdir()

    def seen():
        jail.build_jail(str(shared_tmp / "jail"), system + [str(shared_tmp / "sys")], str(shared_tmp / "stub"),
                        str(shared_tmp / "work"), 0, 0, 1 << 20, devices=DEVICES,
                        withhold=[str(shared_tmp / "sys" / "keys"), str(shared_tmp / "sys" / "file")])
        confine.drop_to(USER, USER)
        out = {}
        for path in ("sys/keys", "sys/keys/k", "sys/file", "sys/open"):
            try:
                full = shared_tmp / path
                out[path] = os.listdir(full) if full.is_dir() else full.read_text()
            except OSError as exc:
                out[path] = type(exc).__name__
        return out, sorted(os.listdir("/dev"))

    out, dev = probe.in_child(seen)
    assert out == {"sys/keys": "PermissionError", "sys/keys/k": "PermissionError", "sys/file": "PermissionError",
                   "sys/open": "OPEN"}, out
    assert dev == sorted([d.split("/")[-1] for d in DEVICES] + ["fd", "shm", "stdin", "stdout", "stderr"]), dev


def test_capabilities_are_what_the_policy_takes():
    from grader.sandbox.confine import policy

    caps = policy.Caps(**probe.capabilities("auto", USER))
    assert caps.root and caps.landlock == landlock.abi() and caps.seccomp == probe.seccomp_works()
    assert caps.python_readable == (probe.unreadable_by(USER, python_paths()) == [])
    assert (caps.cgroup is None) == bool(caps.cgroup_reason)


def test_survivors_are_the_processes_a_clean_up_could_not_kill():
    """procs.survivors, which the fork server and the session's close() use to verify that nothing of a
    submission is left: [] when everything died; the pid when a process could not be killed (here one
    the caller may not signal)."""
    sleeper = os.fork()
    if sleeper == 0:
        time.sleep(60)
        os._exit(0)
    try:
        assert procs.survivors(lambda: [sleeper] if procs.alive(sleeper) else [], SandboxTimings().gone_seconds) == []
    finally:
        os.waitpid(sleeper, 0)
    if os.geteuid() != 0:
        pytest.skip("needs root: the test drops to an unused uid that may not signal its parent")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            confine.drop_to(61997, 61997)
            parent = os.getppid()
            os.write(write_fd, repr(procs.survivors(lambda: [parent], seconds=0.2) == [parent]).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        assert f.read() == "True"
    os.waitpid(pid, 0)


def test_in_child_returns_what_the_test_returned_in_a_throw_away_child():
    """probe.in_child, the one fork-and-test helper: the test's value; None when it raised or its process was
    killed; nothing it changes reaches the caller."""
    before = os.getuid(), os.getcwd()

    def changes_and_returns():
        confine.drop_to(USER, USER)
        os.chdir("/")
        return {"uid": os.getuid(), "paths": ["a", "b"]}

    assert probe.in_child(changes_and_returns) == {"uid": USER, "paths": ["a", "b"]}
    assert (os.getuid(), os.getcwd()) == before
    assert probe.in_child(lambda: 1 / 0) is None
    assert probe.in_child(lambda: os.kill(os.getpid(), 9)) is None
    assert probe.in_child(lambda: "x" * (1 << 20)) == "x" * (1 << 20)  # more than a pipe holds
