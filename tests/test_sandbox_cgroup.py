"""Per-child cgroups (grader/sandbox/confine/cgroup.py). cgroup v1 for real where this machine has a writable memory
hierarchy; cgroup v2 against a folder tree that mimics the kernel's files (a real delegated v2 subtree is
rare on test machines)."""

from __future__ import annotations

import ast
import gc
import os
import resource
import shutil
import time
from pathlib import Path

import pytest

from grader.sandbox import procs
from grader.sandbox.confine import cgroup
from grader.settings import SandboxTimings

LIMIT = 256 << 20
GONE = SandboxTimings().gone_seconds


@pytest.fixture
def real():
    kind, reason = cgroup.probe()
    if kind is None:
        pytest.skip(f"no cgroup can be made here: {reason}")
    made = []
    yield lambda *a, **k: made.append(cgroup.Cgroup.create(*a, gone_seconds=GONE, **k)) or made[-1]
    for group in made:
        group.kill_and_remove(GONE)


def fill(path_or_memfd, megabytes):
    """In a forked child: write `megabytes` MB to a memfd or a file; (exit code, signal, MB written)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code, written = 0, 0
        try:
            os.close(read_fd)
            # the process the kernel must pick when the group is out of memory: not its parent, which holds
            # as much of the test process's memory (copy-on-write) and would say nothing once killed
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
            if path_or_memfd == "memfd":
                fd = os.memfd_create("fill")
            else:
                fd = os.open(path_or_memfd, os.O_CREAT | os.O_WRONLY)
            chunk = b"\x01" * (16 << 20)
            while written < megabytes << 20:
                written += os.write(fd, chunk)
                os.write(write_fd, b".")  # one dot per 16 MB, readable even after a kill
        except OSError:
            code = 3  # ENOMEM / ENOSPC: refused rather than killed
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def wait(pid, read_fd):
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read_fd, "rb") as f:
        megabytes = len(f.read()) * 16
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return code, os.WTERMSIG(status) if os.WIFSIGNALED(status) else None, megabytes


@pytest.mark.parametrize("where", ["memfd", "/dev/shm"])
def test_memory_files_are_charged_to_the_cgroup_and_rlimit_as_would_not_stop_them(where, real, tmp_path):
    if where == "/dev/shm" and not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    target = "memfd" if where == "memfd" else f"/dev/shm/posenc-test-{os.getpid()}"
    try:
        # RLIMIT_AS alone: an allowance of 256 MB over what is mapped, as confine.limit sets it; 512 MB pass
        pid = os.fork()
        if pid == 0:
            gc.disable()
            with open("/proc/self/statm") as f:
                vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            resource.setrlimit(resource.RLIMIT_AS, (vm + LIMIT, vm + LIMIT))
            child, fd = fill(target, 512)
            os._exit(0 if wait(child, fd) == (0, None, 512) else 1)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, "RLIMIT_AS stopped the memory file"
        if target != "memfd":
            os.unlink(target)
        # the same under a 256 MB cgroup: the kernel kills it (or refuses the pages) near 256 MB
        group = real("fill", LIMIT)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            gc.disable()  # a full collection would copy the test process's heap into the group (copy-on-write)
            group.join(0)
            child, fd = fill(target, 512)
            os.write(write_fd, repr(wait(child, fd)).encode())
            os._exit(0)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as f:
            code, sig, megabytes = ast.literal_eval(f.read().decode())
        os.waitpid(pid, 0)
        assert sig == 9 or code == 3, (code, sig)  # killed by the kernel, or ENOMEM
        assert 128 <= megabytes <= 256, megabytes  # it got a good way, never past the limit
        assert group.oom_killed() == (sig == 9)
        assert group.kill_and_remove(GONE) and not os.path.exists(group.memory)
    finally:
        if target != "memfd" and os.path.exists(target):
            os.unlink(target)


def test_the_process_limit_stops_a_fork_flood(real):
    group = real("pids", LIMIT, pids=8)
    if len(group.folders) == 1 and group.kind == "v1":
        pytest.skip("no pids controller here")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        group.join(0)
        started = 0
        try:
            while started < 100:
                if os.fork() == 0:
                    os.close(write_fd)
                    time.sleep(30)
                    os._exit(0)
                started += 1
        except OSError:
            pass
        os.write(write_fd, str(started).encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        started = int(f.read())
    os.waitpid(pid, 0)
    assert started <= 7  # 8 processes in the group: the child and 7 of its own
    assert group.pids()  # the sleepers, orphaned, are still in the group...
    assert group.kill_and_remove(GONE)  # ...and killed with it
    assert group.kill_and_remove(GONE)  # again: already gone is fine


def test_groups_of_a_grader_that_died_are_swept(real):
    """A grader killed mid-run leaves its group and a process in it; the next grader removes both."""
    read_fd, write_fd = os.pipe()
    owner = os.fork()
    if owner == 0:
        group = cgroup.Cgroup.create("orphan", LIMIT, gone_seconds=GONE)
        if os.fork() == 0:
            os.close(write_fd)
            group.join(0)
            time.sleep(60)
            os._exit(0)
        os.write(write_fd, group.memory.encode())
        os._exit(0)  # dies without cleaning up
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        folder = f.read().decode()
    os.waitpid(owner, 0)
    left = cgroup.Cgroup("v1" if "cgroup.type" not in os.listdir(folder) else "v2", [folder])
    for _ in range(100):
        if left.pids():
            break
        time.sleep(0.01)
    sleeper = left.pids()
    assert sleeper and os.path.isdir(folder)
    ours = real("kept", LIMIT)
    cgroup._SWEPT.discard(os.path.dirname(folder))
    cgroup.sweep(os.path.dirname(folder), GONE)
    assert not os.path.exists(folder) and not any(procs.alive(p) for p in sleeper)
    assert os.path.isdir(ours.memory)  # a live grader's group stays


# ---- cgroup v2, against a fake tree ---------------------------------------------------------------------
def fake_v2(tmp_path, own="/user.slice/user-1000.slice/grader.scope", enabled=None, root_in_mount="/"):
    """A /proc/self and a cgroup2 mount whose folders enable the controllers `enabled` says."""
    mount = tmp_path / "sys" / "fs" / "cgroup"
    enabled = enabled if enabled is not None else {"/": "cpu memory pids", "/user.slice": "memory pids",
                                                   "/user.slice/user-1000.slice": "memory pids"}
    for path, controllers in list(enabled.items()) + ([(own, "")] if own not in enabled else []):
        folder = mount / path.lstrip("/")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cgroup.subtree_control").write_text(controllers + "\n")
        (folder / "cgroup.procs").write_text("")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(f"0::{own}\n")
    (proc / "mountinfo").write_text(
        f"24 1 0:22 / /proc rw,nosuid - proc proc rw\n"
        f"30 24 0:26 {root_in_mount} {mount} rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw\n")
    return mount, proc


@pytest.fixture
def kernel_like(monkeypatch):
    """mkdir and rmdir as cgroupfs does them: a new group comes with the files its parent enables."""
    def make(path):
        os.mkdir(path)
        enabled = Path(path).parent.joinpath("cgroup.subtree_control").read_text().split()
        names = ["cgroup.procs", "cgroup.type", "cgroup.kill", "cgroup.subtree_control"]
        names += ["memory.max", "memory.swap.max", "memory.events", "memory.peak"] if "memory" in enabled else []
        names += ["pids.max"] if "pids" in enabled else []
        for name in names:
            Path(path, name).write_text({"memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
                                         "memory.peak": "0\n", "cgroup.type": "domain\n"}.get(name, ""))

    monkeypatch.setattr(cgroup, "_make_dir", make)
    monkeypatch.setattr(cgroup, "_remove_dir", shutil.rmtree)


def test_v2_uses_the_nearest_folder_that_enables_memory(tmp_path, kernel_like):
    mount, proc = fake_v2(tmp_path)
    place = cgroup.locate(str(proc))
    assert place.kind == "v2" and place.memory == str(mount / "user.slice/user-1000.slice") == place.pids
    group = cgroup.Cgroup.create("ex1", 123 << 20, pids=9, place=place, gone_seconds=GONE)
    folder = Path(group.memory)
    assert folder.parent == mount / "user.slice/user-1000.slice" and folder.name == f"posenc-{os.getpid()}-ex1"
    assert (folder / "memory.max").read_text() == str(123 << 20)
    assert (folder / "memory.swap.max").read_text() == "0" and (folder / "pids.max").read_text() == "9"
    group.join(4321)
    assert (folder / "cgroup.procs").read_text() == "4321"
    assert not group.oom_killed()
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n")
    assert group.oom_killed()
    (folder / "cgroup.procs").write_text("")  # the kernel empties it on cgroup.kill
    assert group.kill_and_remove(GONE) and not folder.exists()


def test_v2_without_memory_anywhere_says_why(tmp_path, kernel_like):
    _, proc = fake_v2(tmp_path, enabled={"/": "cpu", "/user.slice": "", "/user.slice/user-1000.slice": ""})
    with pytest.raises(cgroup.Unavailable, match="no folder from /user.slice/user-1000.slice/grader.scope upwards"):
        cgroup.locate(str(proc))
    assert cgroup.probe(str(proc))[0] is None


def test_v2_in_a_container_whose_mount_root_is_its_own_group(tmp_path, kernel_like):
    """A cgroup namespace shows the container's group as "/" and mounts that group's folder."""
    mount, proc = fake_v2(tmp_path, own="/", enabled={"/": "memory"}, root_in_mount="/")
    place = cgroup.locate(str(proc))
    assert place.memory == str(mount) and place.pids is None
    group = cgroup.Cgroup.create("ex", 1 << 20, pids=5, place=place, gone_seconds=GONE)
    assert not Path(group.memory, "pids.max").exists()  # no pids controller: not set, not an error


def test_v2_mount_of_a_subtree(tmp_path, kernel_like):
    """Without a cgroup namespace, a container may see the host's path in /proc/self/cgroup and a mount
    whose root is its own part of the tree."""
    mount, proc = fake_v2(tmp_path, own="/", enabled={"/": "memory pids"})
    (proc / "cgroup").write_text("0::/docker/abc/inner\n")
    (mount / "inner").mkdir()
    (mount / "inner" / "cgroup.subtree_control").write_text("memory\n")
    (proc / "mountinfo").write_text(f"30 24 0:26 /docker/abc {mount} rw - cgroup2 cgroup2 rw\n")
    assert cgroup.locate(str(proc)).memory == str(mount / "inner")
