"""confine.py's probes and clean-up helpers, each tried in forked children under an unused uid."""

from __future__ import annotations

import ctypes
import os
import pwd
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox import confine, procs

USER = 61999  # a uid no account has, standing for a grading user who is not root


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
    system = [p for p in confine.SYSTEM_PATHS if os.path.exists(p)]
    kernel = as_user(lambda: libc.unshare(confine.CLONE_NEWUSER | confine.CLONE_NEWNS) == 0) == 0
    probe = as_user(lambda: confine.can_userns_jail(system)) == 0
    assert probe <= kernel
    if kernel:
        assert probe, "unprivileged user namespaces work here, but the jail could not be built in one"
    print(f"unprivileged user namespaces: {kernel}; user-namespace jail: {probe}")


def test_unreadable_by_tries_the_uid_for_real(shared_tmp):
    tmp_path = shared_tmp
    open_ = tmp_path / "open"
    shut = tmp_path / "shut"
    for folder, mode in ((open_, 0o755), (shut, 0o700)):
        (folder / "lib").mkdir(parents=True)
        os.chmod(folder, mode)
    paths = [str(open_ / "lib"), str(shut / "lib")]
    assert confine.unreadable_by(USER, paths) == [str(shut / "lib")]
    assert confine.unreadable_by(0, paths) == []


def test_leftover_system_v_objects_are_removed():
    def make():
        libc = ctypes.CDLL(None, use_errno=True)
        return min(libc.shmget(0, 1 << 20, 0o1600), libc.semget(0, 2, 0o1600), libc.msgget(0, 0o1600)) >= 0

    assert as_user(make) == 0
    assert as_user(make) == 0
    made = confine.sysv_ipc(USER)
    assert {kind for kind, _ in made} == {"shm", "sem", "msg"} and len(made) == 6
    keep = {ident for ident in made if ident[0] == "shm"}
    assert confine.remove_sysv_ipc(USER, keep=keep) == set()
    assert confine.sysv_ipc(USER) == keep
    assert confine.remove_sysv_ipc(USER) == set() and confine.sysv_ipc(USER) == set()


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
        removed = confine.remove_files_of(USER, folders=("/tmp",))
        assert sorted(removed) == sorted(f"/tmp/{n}" for n in names)
        assert not any(os.path.lexists(f"/tmp/{n}") for n in names) and os.path.exists("/etc/passwd")
        assert mine.exists()
        with pytest.raises(ValueError):
            confine.remove_files_of(os.getuid())
    finally:
        mine.unlink()
        for n in names:
            if os.path.isdir(f"/tmp/{n}"):
                shutil.rmtree(f"/tmp/{n}")
            elif os.path.lexists(f"/tmp/{n}"):
                os.unlink(f"/tmp/{n}")


def test_a_working_folder_made_hard_to_remove_is_removed(shared_tmp):
    """Without seccomp, learner code may take its own permissions away from a folder; shutil.rmtree then
    leaves it behind for a grader that is not root. remove_tree does not."""
    os.chown(shared_tmp, USER, USER)  # the grader's folder, holding the working folder
    work = shared_tmp / "work"

    def lock_and_remove():
        (work / "sub" / "deeper").mkdir(parents=True)  # what learner code did
        (work / "sub" / "deeper" / "f").write_text("x")
        os.chmod(work / "sub" / "deeper", 0o000)
        os.chmod(work / "sub", 0o000)
        shutil.rmtree(work, ignore_errors=True)
        if not work.exists():
            return False  # nothing to prove
        return confine.remove_tree(str(work)) and not work.exists()

    assert as_user(lock_and_remove) == 0


def test_landlock_reads_of_etc_leave_out_its_secrets():
    entries = confine._withhold_etc(["/usr", "/etc"])
    assert entries[0] == "/usr" and "/etc/passwd" in entries and "/etc" not in entries
    assert not {"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh"} & set(entries)
    assert len(entries) == 1 + len([n for n in os.listdir("/etc") if n not in confine.ETC_WITHHELD])


def test_capabilities_are_what_the_policy_takes():
    from grader.sandbox import policy, seccomp

    caps = policy.Caps(**confine.capabilities("auto", USER))
    assert caps.root and caps.landlock == confine.landlock_abi() and caps.seccomp == seccomp.available()
    assert caps.python_readable == (confine.unreadable_by(USER, confine.python_paths()) == [])
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
        assert procs.survivors(lambda: [sleeper] if procs.alive(sleeper) else []) == []
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
