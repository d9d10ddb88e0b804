"""Every setting of the grader in one place, built once at the edge and passed down.

`Settings.from_env(**overrides)` is called by the command line, the Gradescope runner and the
pytest plugin; everything below them receives the object (or, across a process boundary, its
`to_json()` form) and never reads the environment again. Every default lives in this file.

Environment variables (for graders run by other programs; command-line options override them):

    POSENC_SANDBOX_MEMORY_MB    memory one exercise may add (Limits.memory_mb)
    POSENC_SANDBOX_CPU_SECONDS  CPU time of one exercise (Limits.cpu_seconds)
    POSENC_SANDBOX_MODE         one of MODES (default auto: the strongest available)
    POSENC_SANDBOX_PROTECT      extra folders no learner code may see (os.pathsep-separated)
    POSENC_SANDBOX_UID_BASE     first user id the sandbox may borrow as root (Settings.uid_base)
    POSENC_SANDBOX_LANES        children of one submission that run at once (Settings.lanes; 0: as the cores allow)
    POSENC_GRADER_SECRET        the file holding the grader's secret (default DEFAULT_SECRET in the repository)

One name per quantity, from the command line to the sandbox child: `--memory-mb`, $POSENC_SANDBOX_MEMORY_MB,
`Limits.memory_mb`, `policy.Request.memory_mb`, `policy.Policy.memory_mb`, converted to bytes only where the
kernel is told (confine.limit's RLIMIT_AS; the cgroup's `Policy.cgroup_mb` is that allowance plus
`SandboxTimings.cgroup_headroom_mb`). The same for `nproc`, `cpu_seconds`, `file_bytes`, `work_bytes`, `stmt_seconds`
and `uid_base`, and for the sandbox's waits and margins (`SandboxTimings`: `stmt_grace_seconds`, `gone_seconds`...).
The sandbox's fixed settings (SANDBOX: the wire's framing, polling, killing; CANDIDATES' bounds of a call) keep their
names in the zygote too, which reads them from a copy of their values (grader/sandbox/constants.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

# POSENC_SANDBOX_MODE's values: one list, which the sandbox's policy reads too (grader/sandbox/modes.py has no
# imports: it is copied beside the zygote)
from .sandbox.modes import FORCED as MODES  # noqa: F401 (re-exported)

DEFAULT_SECRET = ".grader-secret"  # in the repository's root; .gitignore'd, never in a release
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
# Settings.lanes = 0: at most this many children of a submission at once (a run is mostly the kernel's start and end
# of a confined process; on two cores two lanes take a third off a chapter's runs: README, "Measurements")
LANES_AUTO = 2
LAYOUTS = ("auto", "plain", "nbgrader")  # batch: how a class folder is read (grader/batch/discovery.py)

# Memory one exercise may add, per command (docs/instructor.md, "Memory", has the table):
# - grade and batch run on the instructor's machine: 6 GB leaves room for a wrong but honest answer (the
#   direct Shaw et al. form at L = 1024 takes 2.8 GB) to fail its check on its numbers instead of on memory;
# - Gradescope's container is small (768 MB by default; the docs recommend a size per assignment): 512 MB
#   per exercise keeps a memory bomb inside the sandbox's limit, below the container's.
GRADESCOPE_MEMORY_MB = 512
GRADESCOPE_WALL_SECONDS = 30.0
# one child at a time in a Gradescope container: its memory (GRADESCOPE_CONTAINER_MB) was measured so, and a
# container's CPU quota need not show in the cores its processes may use (Settings.lanes)
GRADESCOPE_LANES = 1
# Container memory to choose on Gradescope, per assignment (MB), from `python benchmarks/bench_gradescope_memory.py
# --assignment all` on examples/complete: the peak (the larger of the process tree's PSS and its memory cgroup's
# peak) times 1.5, and at least the peak plus GRADESCOPE_MEMORY_MB (so a memory bomb meets the sandbox's limit
# first), in 256 MB steps. "course": the whole course in one bundle. docs/instructor.md has the measurements.
GRADESCOPE_CONTAINER_MB = {"ch00": 1024, "ch01": 1024, "ch02": 1024, "ch03": 1536, "ch04": 1024, "ch05": 1024,
                           "ch06": 1024, "ch07": 1024, "ch08": 1024, "ch09": 1024,
                           "course": 1792}
# one whole submission in batch (all its exercises, start-up included); also the nbgrader cell's limit on
# grading one notebook (grader/nbgrader_cell.py)
BATCH_TIMEOUT_SECONDS = 1800.0


def default_jobs():
    """batch --jobs: one submission per core this process may use (a worker and its sandbox use one thread)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Limits:
    """What one exercise may use. Per exercise: wall clock, CPU, memory, files, processes; per
    top-level statement of the submission: wall clock."""

    wall_seconds: float = 30.0  # one exercise: its definitions and all its probes, in all its children
    cpu_seconds: int = 60
    memory_mb: int = 6144  # on top of what the fork server has mapped (torch)
    stmt_seconds: float = 5.0  # one top-level statement (a training loop left in a cell is cut here)
    file_bytes: int = 256 << 20  # the largest file learner code may write
    work_bytes: int = 256 << 20  # its working folder, where that is a tmpfs of its own
    result_bytes: int = 512 << 20  # all results of one exercise together
    # all results of one submission together (every exercise, both phases): the bound on what the trusted grading
    # process holds of a submission's answers, on every machine (remote.py's address-space limit is not set where
    # CUDA is). Honest results of the whole course: see docs/instructor.md, "Memory"
    submission_result_bytes: int = 256 << 20
    nproc: int = 64  # processes of the sandbox's user id (as root)
    retries: int = 2  # statements that kill their process, skipped one per retry
    submission_seconds: float = 300.0  # one submission: every child of every exercise, retries included
    judge_seconds: float = 10.0  # judging one answer in the grader's process (a property, a comparison)
    judge_memory_mb: int = 4096  # what the trusted grading process may map beyond its start (remote.py)


@dataclass(frozen=True)
class ReadLimits:
    """What the grader reads of one submission before any of it runs (grader/submission.py, grader/parse.py,
    grader/batch/discovery.py): everything past these is left out with a note."""

    source_file_mb: int = 50  # one .ipynb or .py file (a notebook's outputs count here)
    # the code of one file (a .py file, a notebook's code cells): 24 times the largest the course's notebooks hold
    # (21 KB); past it the file is left out with a note. What grading a file costs grows with its code
    code_kb: int = 512
    source_total_mb: int = 100  # all graded files of one submission
    source_files: int = 64  # .py and .ipynb files graded per submission
    dir_entries: int = 2000  # directory entries looked at per submission
    dir_depth: int = 6  # folder levels below the submission's root
    name_chars: int = 150  # one file or folder name
    parse_memory_mb: int = 1024  # address space of the child that parses one file (JSON, then ast)
    parse_seconds: int = 20  # its CPU time and its wall clock (never more than the submission's budget has left)
    timestamp_bytes: int = 200  # nbgrader's timestamp.txt in a submission (a time that the student's side wrote)


@dataclass(frozen=True)
class SandboxTimings:
    """The sandbox's own waits and margins (grader/sandbox/): how long the grader's side waits for the zygote and a
    session server, how long they wait for killed processes to go, and the margins over the Limits. Each keeps its
    name on the way down: the zygote gets `ended_seconds` in each AskEnded, a session server `stmt_grace_seconds`
    and `gone_seconds` in each RunJob (grader/sandbox/wire.py), the policy `cgroup_headroom_mb` in its Request."""

    start_seconds: float = 180.0  # the zygote's hello, once it has imported torch (sandbox/host/client.py)
    fork_seconds: float = 30.0  # the zygote's answer to a Fork (a session server, a trusted grading process)
    ask_seconds: float = 10.0  # the zygote's answer to an AskEnded
    ended_seconds: float = 2.0  # how long the zygote waits for a session that lost its grader to end (AskEnded)
    started_seconds: float = 60.0  # a session server's Started for a child (no longer than the exercise's time left)
    killed_seconds: float = 10.0  # its Ended once the grader has killed a child that ran out of wall clock
    stmt_grace_seconds: float = 1.0  # a top-level statement past its alarm before the session server ends the child
    gone_seconds: float = 5.0  # for processes sent SIGKILL (and a cgroup's) to be gone before they count as survivors
    # the cgroup's memory limit over Limits.memory_mb: copy-on-write copies of the zygote's pages, page tables,
    # kernel memory, which RLIMIT_AS does not count; RLIMIT_AS (a MemoryError learner code can report) is met first
    # where it applies, the cgroup (the kernel's OOM kill) is the backstop
    cgroup_headroom_mb: int = 256
    uid_slots: int = 1000  # user ids from uid_base that root graders may borrow, one per live session


@dataclass(frozen=True)
class SandboxConstants:
    """The sandbox's fixed settings (no option changes them), which code on both sides of the zygote reads: the
    grader imports them from here (grader/sandbox/constants.py), the zygote's interpreter from the module
    host/runtime_files.py writes from them into its folder. The wire's framing is among them: both ends must agree
    on it before any message (and so any setting) has crossed."""

    # the framing (grader/sandbox/wire.py)
    read_bytes: int = 1 << 16  # one read of a socket
    pipe_bytes: int = 1 << 20  # a request pipe's and a result pipe's capacity (Linux's default limit for a user)
    fds_per_line: int = 4  # file descriptors accepted beside one line
    # the longest line a Channel accepts: a RunJob carries a submission's code (ReadLimits: at most 32 MB of code,
    # up to 6 bytes a character once JSON-escaped); a longer line is dropped unread, up to its newline
    frame_bytes: int = 1 << 28
    # waiting and killing (procs.py, confine/cgroup.py, runtime/)
    poll_seconds: float = 0.01  # between two looks at processes or a cgroup that should be gone
    kill_rounds: int = 200  # SIGKILL rounds over what is still found before kill_all gives up (a fork bomb converges)
    kill_round_seconds: float = 0.002  # between two rounds
    zygote_poll_seconds: float = 1.0  # the zygote reaps its ended sessions at least this often
    watchdog_seconds: float = 0.5  # a session server looks at its child's statement at least this often
    remembered_exits: int = 1000  # exit statuses of ended sessions the zygote keeps until the grader asks
    probe_work_bytes: int = 1 << 20  # the tmpfs of the probe that tries a user-namespace jail (runtime/probe.py)


# Fixed caps, the same for every run (no option changes them): how much of what a submission controls is
# accepted back from the sandbox and reaches a report. Read as REPORT and ANSWER.
@dataclass(frozen=True)
class ReportLimits:
    """How much of what a submission controls reaches a report (grader/escape.py, grader/report.py, batch)."""

    message_chars: int = 2000  # one learner-controlled message (an exception quoted in feedback, a note)
    test_name_chars: int = 80  # a Gradescope test's name; the whole description goes in its output
    student_chars: int = 48  # a student's id in batch (from their folder's name)
    line_chars: int = 200  # one line of learner text where no other cap is named (escape.one_line, escape.csv_cell)
    title_chars: int = 300  # a one-line title or cause: a submission's path, a check's name, why a step failed
    feedback_chars: int = 600  # one failed check's feedback in an nbgrader test cell's output
    entry_chars: int = 120  # batch: a student's entry (its file or folder name) in the batch's records


@dataclass(frozen=True)
class AnswerLimits:
    """What the grader accepts of one probe result (grader/results.py, grading._form_problem)."""

    json_bytes: int = 4 << 20  # a result's JSON part (and the child's execution log)
    keys: int = 500  # fields of one result
    key_chars: int = 200  # one field's name
    string_chars: int = 20000  # one string field
    list_items: int = 100000  # one list of numbers
    tensor_numel: int = 1 << 24  # elements of one tensor, before it is compared or a property computed on it
    tensor_ndim: int = 8
    # what a refused result's diagnosis quotes of it: a field's name, a claimed dtype, the error, and of the child's
    # log, its entries and each one's place and text
    quoted_key_chars: int = 60
    quoted_dtype_chars: int = 40
    quoted_error_chars: int = 200
    log_entries: int = 50
    log_where_chars: int = 200
    log_error_chars: int = 400


@dataclass(frozen=True)
class TwinRules:
    """What a twin must be (grader/twins.py; build --check proves it for every scored check)."""

    # inputs a check's twins can draw, at least: a constant or looked-up answer passes them with probability at
    # most 1 / min_space
    min_space: int = 1000
    separator: str = "~"  # a twin's id: its check's id, the separator, its number


# ---- the grader's own waits and bounds outside the sandbox (issue 26): fixed, read as WAITS, BOUNDS, CANDIDATES and
# AUTHORING; the sandbox's are above
@dataclass(frozen=True)
class Waits:
    """How long the grader waits on what it runs besides learner code (seconds)."""

    # nbgrader's limit on one test cell (`c.Execute.timeout` in the nbgrader export's config) = the grading limit of
    # one notebook (`python -m grader nbgrader --timeout`, default BATCH_TIMEOUT_SECONDS) + this margin, for the
    # kernel to start the grader's process and read its answer: the grading limit is reached first
    nbgrader_cell_margin_seconds: float = 60.0
    # translating one text of the grader's (grader/language.py): reading a long, crafted exception message against
    # every template grows faster than its length (9000 characters: 7.5 s); one not read within this stays English
    translate_seconds: float = 0.25
    git_seconds: float = 60.0  # one git command (build: is a notebook committed; release: what git tracks, ignores)
    import_check_seconds: float = 120.0  # Gradescope's set-up: whether the sandbox's Python imports torch (cold)
    worker_quit_seconds: float = 30.0  # batch: a worker asked to stop answers with its statistics, then exits
    resolve_seconds: float = 600.0  # scripts/gradescope_resolve.py: one pip dry-run resolving the requirements


@dataclass(frozen=True)
class Bounds:
    """How much of its own work the grader keeps, repeats or names, outside the sandbox."""

    drawn_cache: int = 1024  # grader/reference.py: resolved main checks and twins kept (a course's, one student: ~500)
    draw_attempts: int = 64  # grader/unseen.py: draws equal to a shipped input, in a row, before a check is broken
    # grader/shipped.py: a chapter's call whose names take several literal values is counted once per combination,
    # up to this many
    shipped_combinations: int = 4096
    listed_problems: int = 20  # the translation check of build and the release: problems one error names


@dataclass(frozen=True)
class CandidateCalls:
    """A property test's calls of candidate functions: the grader's side (grader/candidates.py) and the bounds both
    sides check (also read in the zygote: grader/sandbox/constants.py)."""

    per_candidate: int = 32  # calls of one check's candidates, per candidate (the reference's test makes 2)
    # every answer a candidate computed comes back pad_seconds + pad_element_seconds * (elements of x and
    # position_ids) after the call, so its time does not tell a good candidate from a bad one
    pad_seconds: float = 0.004
    pad_element_seconds: float = 1e-7
    token_chars: int = 64  # a call's token ("c" and 16 hex digits); a longer one is no call
    # what one call may carry: the child refuses a larger one, the grader checks again (runtime/candidate_calls.py)
    call_bytes: int = 16 << 20  # the arguments, serialized
    x_numel: int = 1 << 20  # elements of x (the reference's test passes 4 x 256 x 64 = 65536), and of an answer
    head_dim: int = 1024  # x.shape[-1]
    angles: int = 1 << 22  # position_ids.numel() x head_dim: the angle tables a candidate builds
    x_ndim: int = 6  # dimensions of x


@dataclass(frozen=True)
class AuthoringRules:
    """What build --check requires of a chapter's declarations (grader/authoring.py) and what a leak of a solution is
    (grader/leaks.py)."""

    ladder_levels: int = 3  # an exercise's hint ladder: at least this many levels, from the idea to its key line
    mistake_levels: int = 3  # a known mistake's ladder: exactly this many
    solution_line_chars: int = 12  # a solution line this long, written in a ladder's first level, gives it away
    leak_line_chars: int = 24  # shorter solution lines ("return out", "x = x + pe") are too generic to prove a leak


REPORT = ReportLimits()
ANSWER = AnswerLimits()
TWINS = TwinRules()
WAITS = Waits()
BOUNDS = Bounds()
CANDIDATES = CandidateCalls()
AUTHORING = AuthoringRules()
SANDBOX = SandboxConstants()


@dataclass(frozen=True)
class Settings:
    limits: Limits = field(default_factory=Limits)
    read: ReadLimits = field(default_factory=ReadLimits)
    sandbox: SandboxTimings = field(default_factory=SandboxTimings)
    sandbox_mode: str = "auto"
    protect: tuple = ()  # folders no learner code may see, besides the grader's own repository
    uid_base: int = 61000
    hidden_visibility: str = "after_due_date"  # Gradescope: when checks that are not public are shown
    cuda_only: bool = False  # only the checks that need a GPU
    progress: bool = False  # say what is happening on stderr while grading
    # the grader's secret, from which the main checks' inputs are drawn (grader/unseen.py); "" is
    # DEFAULT_SECRET in the repository (created on first use, never released)
    secret_file: str = ""
    assignment: str = ""  # grade one assignment (grader/assignment.py); "" = the whole course
    course_file: str = ""  # the course file that defines assignments; "" = course.json at the repository root
    language: str = "en"  # of the report and the feedback: "en" or "zh_CN" (grader/language.py)
    # children of one submission that run at once, each in a session of its own (grader/lanes.py); 0: as many as
    # the cores this process may use, at most LANES_AUTO (batch: its cores shared among its --jobs)
    lanes: int = 0

    def __post_init__(self):
        if self.lanes < 0:
            raise ValueError(f"lanes must be 0 (as the cores allow) or more, got {self.lanes}")
        if self.sandbox_mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {MODES}, got {self.sandbox_mode!r}")
        if self.hidden_visibility not in VISIBILITIES:
            raise ValueError(f"visibility must be one of {VISIBILITIES}, got {self.hidden_visibility!r}")

    @classmethod
    def from_env(cls, env=None, **overrides):
        """Defaults, then the environment, then `overrides` (None values are ignored); `limits` may be
        overridden field by field with a dict."""
        env = os.environ if env is None else env
        limits = {}
        if env.get("POSENC_SANDBOX_MEMORY_MB"):
            limits["memory_mb"] = int(env["POSENC_SANDBOX_MEMORY_MB"])
        if env.get("POSENC_SANDBOX_CPU_SECONDS"):
            limits["cpu_seconds"] = int(env["POSENC_SANDBOX_CPU_SECONDS"])
        limits.update({k: v for k, v in (overrides.pop("limits", None) or {}).items() if v is not None})
        values = {"limits": Limits(**limits)}
        if env.get("POSENC_SANDBOX_MODE"):
            values["sandbox_mode"] = env["POSENC_SANDBOX_MODE"]
        if env.get("POSENC_SANDBOX_PROTECT"):
            values["protect"] = tuple(p for p in env["POSENC_SANDBOX_PROTECT"].split(os.pathsep) if p)
        if env.get("POSENC_SANDBOX_LANES"):
            values["lanes"] = int(env["POSENC_SANDBOX_LANES"])
        if env.get("POSENC_SANDBOX_UID_BASE"):
            values["uid_base"] = int(env["POSENC_SANDBOX_UID_BASE"])
        if env.get("POSENC_GRADER_SECRET"):
            values["secret_file"] = env["POSENC_GRADER_SECRET"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        if "protect" in values:
            values["protect"] = tuple(str(p) for p in values["protect"])
        return cls(**values)

    def lanes_here(self, jobs=1):
        """How many children of one submission run at once here: `lanes`, or with 0 the cores this process may use
        divided among `jobs` submissions graded at once, at least 1 and at most LANES_AUTO."""
        return self.lanes or max(1, min(LANES_AUTO, default_jobs() // max(1, jobs)))

    def replace(self, **changes):
        if isinstance(changes.get("limits"), dict):
            changes["limits"] = dataclasses.replace(self.limits, **changes["limits"])
        return dataclasses.replace(self, **changes)

    def to_json(self):
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text):
        data = json.loads(text)
        data["limits"] = Limits(**data["limits"])
        data["read"] = ReadLimits(**data["read"])
        data["sandbox"] = SandboxTimings(**data["sandbox"])
        data["protect"] = tuple(data["protect"])
        return cls(**data)
