"""The sandbox's policy (grader/sandbox/confine/policy.py), a pure function: every mode from synthetic capabilities."""

from __future__ import annotations

import dataclasses

import pytest

from grader.sandbox.confine import policy
from grader.sandbox.confine.policy import Caps, Refused, Request
from grader.settings import Limits, SandboxTimings

# what the grader's Limits give a request (the policy has no defaults of its own), with a smaller allowance
HEADROOM_MB = SandboxTimings().cgroup_headroom_mb
LIMITS = dict(memory_mb=512, nproc=64, cpu_seconds=Limits().cpu_seconds, file_bytes=Limits().file_bytes,
              work_bytes=Limits().work_bytes, cgroup_headroom_mb=HEADROOM_MB)
FULL = dict(landlock=6, seccomp=True, cgroup="v2", pidns=True)
REQ = Request(workdir="/s/work1", stub="/s/stub", jail_dir="/s/jail", system=("/usr", "/py/lib"),
              protect=("/repo",), uid=61005, gid=61005, gpu_devices=("/dev/nvidia0", "/dev/nvidiactl"),
              **LIMITS)
USER_REQ = Request(workdir="/s/work1", stub="/s/stub", jail_dir="/s/jail", system=("/usr",), **LIMITS)


def decide(caps, req):
    """policy.decide, its notes read in English (each is message data: policy.Note; in Chinese:
    tests/test_messages_grader.py)."""
    p = policy.decide(caps, req)
    assert all(isinstance(n, policy.Note) for n in p.notes)
    return dataclasses.replace(p, notes=tuple(map(str, p.notes)))


def test_root_with_namespaces_gets_the_jail_and_a_uid_of_its_own():
    p = decide(Caps(root=True, jail=True, **FULL), REQ)
    assert (p.mode, p.uid, p.gid, p.jail, p.pidns) == ("root-jail", 61005, 61005, "root", True)
    assert p.binds == ("/usr", "/py/lib") and p.readable[:3] == ("/usr", "/py/lib", "/s/stub")
    assert p.writable == ("/s/work1", "/dev/null", "/tmp", "/dev/shm")
    assert p.seccomp and p.landlock == 6 and p.nproc == 64 and not p.nproc_shared
    assert p.cgroup_mb == 512 + HEADROOM_MB and p.cgroup_pids == 64 and p.memory_mb == 512
    assert p.clean_ipc is None and not p.clean_files_of_uid and p.notes == ()


def test_root_without_namespaces_runs_as_its_own_uid_when_python_is_readable():
    """The note says why there is no jail: the machine, or what POSENC_SANDBOX_MODE asked (it once said "no
    mount namespaces here" on a machine that had them, in both forced cases)."""
    why = {"auto": "no mount namespaces here", "nojail": "POSENC_SANDBOX_MODE=nojail asked for no jail",
           "user": "POSENC_SANDBOX_MODE=user asked for no jail; other users can read this Python, so learner code "
                   "need not run as root"}
    for caps in (Caps(root=True, python_readable=True, **FULL),
                 Caps(root=True, jail=True, python_readable=True, forced="nojail", **FULL),
                 Caps(root=True, jail=True, python_readable=True, forced="user", **FULL)):
        p = decide(caps, REQ)
        assert (p.mode, p.uid, p.jail, p.pidns) == ("root-nojail", 61005, None, False)
        assert p.writable == ("/s/work1", "/dev/null")
        assert p.clean_ipc == "uid" and p.clean_files_of_uid and p.chmod_protect == ()
        assert p.notes == (f"{why[caps.forced]}: learner code ran as uid 61005 (a user id of its own) with Landlock "
                           "(ABI 6) keeping it from the grader's files, not in a private file-system view",)


def test_root_without_namespaces_or_landlock_protects_by_chmod():
    p = decide(Caps(root=True, python_readable=True, **{**FULL, "landlock": 0}), REQ)
    assert p.mode == "root-nojail" and p.landlock == 0 and p.chmod_protect == ("/repo",)
    assert "chmod o-rwx" in p.notes[0]


@pytest.mark.parametrize("forced, landlock", [("auto", 6), ("nojail", 6), ("auto", 0), ("user", 0)])
def test_root_never_runs_learner_code_as_uid_0_unless_asked_and_landlock_is_there(forced, landlock):
    with pytest.raises(Refused) as refused:
        decide(Caps(root=True, python_readable=False, forced=forced, **{**FULL, "landlock": landlock}), REQ)
    message = str(refused.value)
    for remedy in ("container", "where other users can read it", "ordinary user", "POSENC_SANDBOX_MODE=user"):
        assert remedy in message
    assert ("needs Landlock, which is missing here" in message) == (landlock == 0)


def test_root_asked_for_user_mode_runs_as_uid_0_without_capabilities_under_landlock():
    p = decide(Caps(root=True, python_readable=False, forced="user", **FULL), REQ)
    assert (p.mode, p.uid, p.jail, p.landlock, p.seccomp) == ("root-user", None, None, 6, True)
    assert p.nproc is None and p.cgroup_pids == 64  # root is exempt from RLIMIT_NPROC: the cgroup counts
    assert "uid 0" in p.notes[0] and "without capabilities" in p.notes[0]
    without_cgroup = decide(Caps(root=True, forced="user", **{**FULL, "cgroup": None}), REQ)
    assert any("processes were not limited" in n for n in map(str, without_cgroup.notes))


def test_root_asked_for_user_mode_still_prefers_its_own_uid():
    p = decide(Caps(root=True, jail=True, python_readable=True, forced="user", **FULL), REQ)
    assert p.mode == "root-nojail" and p.uid == 61005


def test_not_root_with_user_namespaces_gets_the_jail_as_itself():
    p = decide(Caps(userns_jail=True, **FULL), USER_REQ)
    assert (p.mode, p.uid, p.jail, p.nproc, p.nproc_shared) == ("user-jail", None, "user", 64, False)
    assert "/tmp" in p.writable and p.clean_ipc is None
    assert p.notes[0].startswith("the grader is not running as root, so learner code ran as your own user, in a "
                                 "private file-system view")


def test_not_root_without_user_namespaces():
    p = decide(Caps(**FULL), USER_REQ)
    assert (p.mode, p.jail, p.nproc_shared, p.clean_ipc) == ("user", None, True, "new")
    assert "Landlock (ABI 6) kept it to the system and Python folders" in p.notes[0]
    assert "this machine allows no user namespaces" in p.notes[0]
    p = decide(Caps(userns_jail=True, forced="nojail", **FULL), USER_REQ)
    assert p.mode == "user" and "user namespaces" not in p.notes[0]  # they are there: the mode was forced
    assert "POSENC_SANDBOX_MODE=nojail asked for no private file-system view" in p.notes[0]
    p = decide(Caps(**{**FULL, "landlock": 0}), USER_REQ)
    assert p.mode == "none" and "read and write whatever you can" in p.notes[0]
    assert "allows no user namespaces and this machine has no Landlock" in p.notes[0]
    p = decide(Caps(forced="nolandlock", **FULL), USER_REQ)
    assert p.mode == "none" and p.landlock == 0 and "POSENC_SANDBOX_MODE=nolandlock asked for no Landlock" in p.notes[0]


def test_a_jail_without_a_pid_namespace_says_what_proc_shows():
    p = decide(Caps(root=True, jail=True, **{**FULL, "pidns": False}), REQ)
    assert p.jail == "root" and not p.pidns
    assert p.notes == ("no PID namespace could be made here, so the /proc in learner code's view was the machine's "
                       "(Landlock (ABI 6) let it read its own process's folder only)",)
    p = decide(Caps(userns_jail=True, **{**FULL, "pidns": False, "landlock": 0}), USER_REQ)
    assert p.mode == "user-jail" and not p.pidns and "it could list every process" in p.notes[-1]
    assert decide(Caps(userns_jail=True, **FULL), USER_REQ).pidns


def test_weaker_mechanisms_are_said_in_the_notes():
    p = decide(Caps(root=True, jail=True, **{**FULL, "seccomp": False}), REQ)
    assert p.notes == ("seccomp is not available here, so learner code could change the modes, owners and times of "
                       "files it can write to, open UDP and Unix sockets, and use System V IPC and memfd",)
    p = decide(Caps(root=True, jail=True, cgroup_reason="no delegation", **{**FULL, "cgroup": None}), REQ)
    assert p.cgroup_mb is None and p.cgroup_pids is None and p.memory_mb == 512
    assert p.notes == ("no cgroup could be made here (no delegation): memory was limited by address space only "
                       "(RLIMIT_AS), which memory files and shared memory do not use",)


def test_cuda_drops_the_address_space_limit_and_keeps_the_cgroup():
    cuda = Request(**{**REQ.__dict__, "cuda": True})
    p = decide(Caps(root=True, jail=True, **FULL), cuda)
    assert p.memory_mb is None and p.cgroup_mb == 512 + HEADROOM_MB and p.notes == ()
    assert p.writable[-2:] == ("/dev/nvidia0", "/dev/nvidiactl")
    assert decide(Caps(root=True, jail=True, **FULL), REQ).writable[-1] == "/dev/shm"  # devices only for CUDA
    p = decide(Caps(root=True, jail=True, **{**FULL, "cgroup": None}), cuda)
    assert p.memory_mb is None and p.cgroup_mb is None
    assert p.notes == ("no cgroup could be made here, and CUDA cannot start under an address-space limit: this "
                       "exercise ran without a memory limit",)


def test_requests_that_cannot_be_honoured():
    with pytest.raises(Refused, match="POSENC_SANDBOX_MODE='jail' is not one of"):
        decide(Caps(forced="jail"), USER_REQ)
    with pytest.raises(ValueError, match="must name the sandbox's uid"):
        decide(Caps(root=True, jail=True, **FULL), USER_REQ)


def test_the_secret_is_withheld_in_every_mode_and_mode_none_refuses_it():
    """The grader's secret reaches Landlock and the jail in every confining mode; mode none, which has neither,
    refuses a request that withholds it and names it (it once ran, and learner code read the secret)."""
    secret = ("/etc/posenc/secret",)
    for caps, req in ((Caps(root=True, jail=True, **FULL), REQ),
                      (Caps(root=True, python_readable=True, **FULL), REQ),
                      (Caps(root=True, forced="user", **FULL), REQ),
                      (Caps(userns_jail=True, **FULL), USER_REQ), (Caps(**FULL), USER_REQ)):
        assert decide(caps, Request(**{**REQ.__dict__, **req.__dict__, "withhold": secret})).withhold == secret
    for caps in (Caps(**{**FULL, "landlock": 0}), Caps(forced="nolandlock", **FULL)):
        with pytest.raises(Refused, match="sandbox mode none cannot keep learner code from reading the grader's "
                                          "secret /etc/posenc/secret"):
            decide(caps, Request(**{**USER_REQ.__dict__, "withhold": secret}))


def test_no_terminal_is_among_the_devices_a_child_may_open():
    """Of /dev, a child reads a few devices (never /dev as a whole: /dev/pts/N, /dev/tty); the jail's /dev holds
    those and, for a CUDA exercise, the GPU's (it once bound the machine's whole /dev)."""
    devices = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
    for caps in (Caps(root=True, jail=True, **FULL), Caps(root=True, forced="user", **FULL), Caps(**FULL)):
        p = decide(caps, REQ)
        assert not [r for r in p.readable if r == "/dev" or r.startswith(("/dev/pts", "/dev/tty"))], p.readable
        assert set(devices) <= set(p.readable) and p.devices == devices
    cuda = decide(Caps(root=True, jail=True, **FULL), Request(**{**REQ.__dict__, "cuda": True}))
    assert cuda.devices == devices + ("/dev/nvidia0", "/dev/nvidiactl")
