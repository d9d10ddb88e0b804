"""Every default and limit is written once, in grader/settings.py (issue 19).

Parses every module of grader/ with `ast` and fails where a numeric literal restates one of Settings'
defaults outside settings.py:
- a *distinctive* default value (at least 1000 and not an everyday power of two such as 4096, or a
  megabyte count written in bytes: `6144 << 20`, 61000, 1800.0, ...) anywhere it names something: the
  value of an assignment, of a keyword argument or of a parameter's default; exercise data (a check's
  arguments, a positional 4096) is not a limit, nor is a hexadecimal kernel flag;
- any default value (60, 64, 20, 6, ...) given to a name that shares a distinctive word with the
  setting's name (`cpu_seconds: int = 60`, `PARSE_SECONDS = 20`, `MAX_DEPTH = 6`).
0, 1, 2 and -1 are never limits by themselves. The defaults are read from grader.settings at test time,
so a value changed there is followed here.
"""

import ast
import dataclasses
import re

from grader import settings as S
from tests.conftest import ROOT

GRADER = ROOT / "grader"
TRIVIAL = {0, 1, 2, -1}
# words that say a unit or a kind of bound, not which quantity: they alone never make two names the same setting
GENERIC = {"max", "min", "default", "bytes", "mb", "seconds", "s", "chars", "limit", "timeout"}


def defaults():
    """[(setting name, value)] for every numeric default: Settings' fields (nested dataclasses included) and
    settings.py's module constants (the Gradescope and batch presets, the fixed caps REPORT and ANSWER)."""
    out = []

    def walk(cls, prefix=""):
        for f in dataclasses.fields(cls):
            value = f.default if f.default is not dataclasses.MISSING else None
            if f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            if dataclasses.is_dataclass(value):
                walk(type(value), f"{prefix}{f.name}.")
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out.append((f.name, value))

    walk(S.Settings)
    for name, value in vars(S).items():
        if name.isupper() and dataclasses.is_dataclass(value) and not isinstance(value, type):
            walk(type(value))
        elif name.isupper() and isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append((name.lower(), value))
        elif name.isupper() and isinstance(value, dict):  # a table of presets, e.g. container sizes
            out += [(name.lower(), v) for v in value.values() if isinstance(v, (int, float))]
    return out


def _forms(name, value):
    """The value as it may be written elsewhere: itself, and in bytes where the name says megabytes."""
    forms = {value}
    if name.endswith("_mb") and isinstance(value, int):
        forms.add(value << 20)
    return forms


def _common_size(value):
    """1024, 4096, 16 << 20, ...: powers of two below 2**30 are everyday sizes (a page, a context length, a number of
    MB), and 1000, 100000, ... everyday round numbers (a base, a count), too common to mark a limit by their value
    alone (16 MB of a call's bytes is not 16 M elements of a tensor); a name must say which limit they are."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value <= 0:
        return False
    power_of_ten = value >= 10 and str(value).rstrip("0") == "1"
    return (value < 1 << 30 and value & (value - 1) == 0) or power_of_ten


def _words(name):
    return {w for w in re.split(r"[_\W]+", name.lower()) if w and w not in GENERIC}


def _number(node):
    """The value of a numeric constant expression (`256 << 20`, `-1`, `30.0`), or None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.Mult)):
            left, right = _number(node.left), _number(node.right)
            if left is not None and right is not None:
                return left << right if isinstance(node.op, ast.LShift) else left * right
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _named_literals(text):
    """[(name, value, line)]: numeric literals that name something (assignment, keyword, parameter default).
    A hexadecimal literal is a bit pattern (a kernel flag), not a quantity."""
    out = []
    tree = ast.parse(text)
    for node in ast.walk(tree):
        pairs = []
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, (ast.Name, ast.Attribute)):
            pairs.append((target.id if isinstance(target, ast.Name) else target.attr, node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            pairs.append((node.target.id, node.value))
        elif isinstance(node, ast.Call):
            pairs += [(k.arg, k.value) for k in node.keywords if k.arg]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs += list(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
            pairs += [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for name, value_node in pairs:
            value = _number(value_node)
            if value is not None and not (ast.get_source_segment(text, value_node) or "").lower().startswith("0x"):
                out.append((name, value, value_node.lineno))
    return out


def restated(path, table, root=ROOT):
    """['file:line name = value (restates setting)'] for one module."""
    distinctive = {}
    by_value = {}
    for setting, value in table:
        for form in _forms(setting, value):
            if form in TRIVIAL:
                continue
            by_value.setdefault(form, set()).add(setting)
            if abs(form) >= 1000 and not _common_size(form):
                distinctive.setdefault(form, set()).add(setting)
    found = []
    for name, value, line in _named_literals(path.read_text()):
        if value in distinctive:
            why = distinctive[value]
        else:
            why = {s for s in by_value.get(value, ()) if _words(s) & _words(name)}
        if why:
            found.append(f"{path.relative_to(root)}:{line} {name} = {value!r} (restates {', '.join(sorted(why))})")
    return found


def test_no_default_is_restated_outside_settings():
    table = defaults()
    found = [hit for path in sorted(GRADER.rglob("*.py")) if path.name != "settings.py"
             for hit in restated(path, table)]
    assert not found, "defaults written outside grader/settings.py (read them from Settings):\n" + "\n".join(found)


def test_the_scan_catches_each_kind_of_restatement(tmp_path):
    """The detector itself: each form it must catch, and what it must leave alone."""
    table = [("memory_mb", 6144), ("cpu_seconds", 60), ("uid_base", 61000), ("dir_depth", 6), ("judge_memory_mb", 4096),
             ("result_bytes", 512 << 20)]
    module = tmp_path / "grader" / "m.py"
    module.parent.mkdir()
    module.write_text("A = 6144 << 20\n"  # megabytes written as bytes
                      "def f(x, uid_base=61000):\n    g(timeout=61000)\n"  # parameter default, keyword
                      "class R:\n    cpu_seconds: int = 60\n"  # the setting's own name
                      "MAX_DEPTH = 6\n"  # shares the word 'depth'
                      "ramp(128, 10000.0, 6144)\n"  # positional exercise data: not a limit
                      "WIDTH = 60\n"  # 60, but no word of any setting's name
                      "CLONE_NEWPID = 0x20000000\n"  # a kernel flag
                      "draw(seq_len=4096)\n")  # an everyday size under a name of no setting
    found = restated(module, table, tmp_path)
    assert sorted(int(h.split()[0].rsplit(":", 1)[1]) for h in found) == [1, 2, 3, 5, 6], found


def test_mode_names_are_one_list():
    """settings.MODES (what POSENC_SANDBOX_MODE may say) is the list the sandbox's policy decides from, not a copy
    (tests/test_architecture.py: settings imports nothing of the sandbox but that list)."""
    from grader.sandbox import modes
    from grader.sandbox.confine import policy

    assert S.MODES is policy.FORCED is modes.FORCED


def test_the_docs_state_the_defaults_of_settings():
    """docs/instructor.md restates defaults for instructors: each statement, formatted from Settings, is there
    (a default changed in settings.py without the docs fails here)."""
    limits, read, settings = S.Limits(), S.ReadLimits(), S.Settings()
    text = " ".join((ROOT / "docs" / "instructor.md").read_text().split())
    stated = [
        f"| `grade`, `batch` | {limits.memory_mb} MB (or `$POSENC_SANDBOX_MEMORY_MB`)",
        f"| `gradescope` | {S.GRADESCOPE_MEMORY_MB} MB |",
        f"`--wall-seconds` per exercise ({limits.wall_seconds:g}), `--timeout` per submission "
        f"({S.BATCH_TIMEOUT_SECONDS:g} s), `--memory-mb` per exercise ({limits.memory_mb})",
        f"Names ({read.name_chars} characters), depth ({read.dir_depth} folders), the number of files "
        f"({read.source_files}) and sizes ({read.source_file_mb} MB a file, {read.source_total_mb} MB a submission)",
        f"limited to {read.parse_memory_mb / 1024:g} GB and {read.parse_seconds} s CPU",
        f"A file with more than {read.code_kb} KB of code",
        f"Reading and parsing count against the submission's wall clock ({limits.submission_seconds:g} s",
        f"accepts at most {limits.submission_result_bytes >> 20} MB of results from one submission's children",
        f"the address-space limit of {limits.judge_memory_mb} MB on that process",
        f"`POSENC_SANDBOX_UID_BASE` ({settings.uid_base})",
        f"`RLIMIT_NPROC` {limits.nproc}",
        f"memory limit = `--memory-mb` + {S.SandboxTimings().cgroup_headroom_mb} MB, no swap, {limits.nproc} processes",
        f"within `--timeout` of the export (default {S.BATCH_TIMEOUT_SECONDS:g} s, as `batch` per submission); "
        f"nbgrader's limit on a cell (`c.Execute.timeout` in `nbgrader_config.py`) is that plus "
        f"{S.WAITS.nbgrader_cell_margin_seconds:g} s",
    ]
    assert [s for s in stated if s not in text] == []


def test_the_zygote_reads_the_shared_settings_from_a_copy_of_their_values(tmp_path):
    """The zygote's interpreter imports no grader: its constants.py, written by host/runtime_files.py, holds the
    values of the settings grader/sandbox/constants.py shares (each a field of settings.py), and imports alone."""
    import json
    import subprocess
    import sys

    from grader.sandbox import constants
    from grader.sandbox.host import runtime_files

    (tmp_path / "constants.py").write_text(runtime_files.generated())
    read = ("import json, sys; sys.path.insert(0, sys.argv[1]); import constants; "
            f"print(json.dumps({{n: vars(getattr(constants, n)) for n in {list(constants.SHARED)!r}}}))")
    done = subprocess.run([sys.executable, "-I", "-c", read, str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    expected = {name: dataclasses.asdict(getattr(S, name)) for name in constants.SHARED}
    assert json.loads(done.stdout) == expected and expected["SANDBOX"]["frame_bytes"] == S.SANDBOX.frame_bytes


# ---- limits written beside their code (issue 26; the rule: tests/limit_scan.py) -------------------------------------
# not course/: each chapter's declared checks are course content (exercise inputs: L_BIG = 2048 is a sequence length)
SCANNED = ("grader", "posenc_selfcheck", "scripts")
# course content, not the grader's limits
COURSE_DATA = {
    "posenc_selfcheck/lab/": "chapter 7's lab: its experiment's data and plots",
    "posenc_selfcheck/gridlab/": "chapter 8's lab: its experiment's data",
}
# what the scan finds that is no limit: {(file, finding): why}
NOT_A_LIMIT = {
    ("grader/unseen.py", "32 assigned to SECRET_BYTES"): "the secret's format (an HMAC-SHA256 key), not a bound",
    ("grader/unseen.py", "1 << 40 assigned to FLOAT_STEPS"): "what a drawn float is: another changes every draw",
    ("grader/unseen.py", "1 << 31 assigned to SEED_SPACE"): "what a drawn seed is: another changes every draw",
    ("grader/sandbox/wire.py", "97 assigned to EXIT_SETUP_FAILED"): "an exit status the grader reads, a protocol tag",
    ("grader/sandbox/confine/seccomp.py", "38 assigned to PR_SET_NO_NEW_PRIVS"): "a prctl option's number (the "
                                                                                   "kernel's <linux/prctl.h>)",
    ("grader/sandbox/confine/cgroup.py", "3 compared with len"): "a mountinfo line's fields after ' - ' (its format)",
    ("grader/sandbox/confine/cgroup.py", "5 compared with len"): "a mountinfo line's fields before ' - ' (its "
                                                                  "format)",
    ("grader/course.py", "2_000_000_000 assigned to SETTLED_NS"): "how coarse a folder's modification time is (the "
                                                                   "kernel's clock tick, with margin), not a bound",
    ("grader/sandbox/runtime/zygote.py", "3 compared with len"): "the sockets a Fork(\"grader\") carries (the "
                                                                  "protocol)",
}


def scan():
    """{(file, finding): line} over every scanned module but settings.py (known parameters: all of theirs)."""
    from tests.limit_scan import findings, parameters

    files = [p for folder in SCANNED for p in sorted((ROOT / folder).rglob("*.py")) if p.name != "settings.py"]
    texts = {p.relative_to(ROOT).as_posix(): p.read_text() for p in files}
    known = {}
    for text in texts.values():
        for name, lists in parameters(ast.parse(text)).items():
            known.setdefault(name, []).extend(lists)
    return {(path, what): line for path, text in texts.items() if not path.startswith(tuple(COURSE_DATA))
            for line, what in findings(text, known)}


def test_no_limit_is_written_beside_its_code():
    found = [f"{path}:{line}: {what}" for (path, what), line in sorted(scan().items())
             if (path, what) not in NOT_A_LIMIT]
    assert not found, "limits written beside their code (make each a field of grader/settings.py):\n" + "\n".join(found)


def test_each_exemption_is_still_needed():
    found = scan()
    assert [key for key in NOT_A_LIMIT if key not in found] == []


def test_the_limit_scan_finds_each_kind_and_leaves_the_rest():
    """The detector itself: a line per rule it must catch, then what it must leave alone."""
    from tests.limit_scan import findings

    caught = ("subprocess.run(cmd, timeout=600)\n"  # (a) a keyword
              "def one_line(text, limit=200): pass\n"  # (a) a parameter's default
              "parse_seconds = 20\n"  # (a) an assignment
              "DRAWN_CACHE = 1024\n"  # (b) a constant
              "one_line(name, 120)\n"  # (c) by position into a limit's parameter
              "select.select([fd], [], [], 30)\n"  # (c) a standard-library wait
              "ok = len(token) > 64\n"  # (d) compared with a length
              "deep = depth <= 6\n"  # (d) compared with a limit's name
              "due = time.monotonic() + 10 ** 9\n"  # (e) a deadline
              "from .settings import REPORT\nMAX_TEXT = REPORT.message_chars\n"  # (f) another name for a setting
              "BIG = 256 << 20\n")  # (b) a constant expression
    left = ("mode = 0o600\nCLONE_NEWPID = 0x20000000\n"  # a file mode, a kernel flag
            "half = d // 2\nHALF = 2\nlast = xs[-1]\nif len(xs) > 1: pass\n"  # NOT_LIMITS
            "x = torch.randn(4, 128)\nratio = 0.5\nrun(cmd, timeout=WAITS.git_seconds)\n")  # data, a setting
    assert [line for line, _ in findings(caught)] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12]
    assert findings(left) == []
