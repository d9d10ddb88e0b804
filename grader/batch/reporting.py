"""A class's results as people read them: per-student records, the gradebook, the class summary, plots.

Everything a student controls (their folder's name, the feedback that quotes their exceptions, the
flags' context) is escaped for where it is written: CSV cells cannot start a formula, Markdown
cannot link, tag or break a table.
"""

from __future__ import annotations

import csv
import io
import statistics
import time
from collections import Counter
from datetime import datetime

from ..escape import csv_cell, markdown
from ..files import read_json, write_atomic, write_json
from ..language import phrasebook
from ..records import Status, messages
from ..settings import REPORT


def record(entry, grade, job):
    """The JSON kept per student (results/<id>.json); `job`: the wire.GradeJob it answers."""
    per_exercise = {exercise: {"score": score, "max": top} for exercise, (score, top) in grade.by_exercise().items()}
    english = phrasebook()  # the record's feedback in English; "message" renders it in any language
    return {
        "student": entry.student, "entry": entry.name, "sha256": job.sha256, "fingerprint": job.fingerprint,
        "assignment": job.assignment, "run_id": job.run_id,
        "graded_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(grade.seconds, 2),
        "total": grade.total, "max": grade.max_score, "exercises": per_exercise,
        "notes": [english.render(n) for n in grade.notes],
        "flags": grade.flags,
        "checks": [{"key": v.check.key, "exercise": v.check.exercise, "name": v.check.name, "status": str(v.status),
                    "score": v.score, "max_score": v.max_score, "public": v.check.public,
                    "feedback": english.render(v.feedback), "message": messages.to_json(v.feedback),
                    "mistake": v.mistake} for v in grade.verdicts],
    }


def _row(cells):
    """Every cell as a spreadsheet shows text: none can start a formula, whatever column it is in."""
    return [csv_cell(c) for c in cells]


def _late(entry, due):
    if due is None or not entry.submitted:
        return ""
    return "late" if datetime.fromisoformat(entry.submitted) > due else "on time"


def _said(data, english):
    """A message stored as JSON (messages.to_json), or, where a record has none, its English text as it is."""
    try:
        return messages.from_json(data) if data is not None else english
    except (TypeError, ValueError, KeyError):
        return english


def write_outputs(out, entries, hashes, fingerprint, assignment, due=None, plots=True, nbgrader=None, language=None):
    """gradebook.csv (a row per student, a column per exercise of the assignment), gradebook_checks.csv (a row per
    student, a column per check of the assignment, named by the check's key), lms.csv (a row per student, one
    total column), manifest.json, summary.json and .md, plots. `nbgrader`: what writing nbgrader's gradebook.db
    gave ({nbgrader student id: "" or why nbgrader could not process the notebook}: nbgrader_export.py). The
    gradebook's notes are in `language` (the settings'); the JSON files keep English."""
    nbgrader, say = nbgrader or {}, phrasebook(language)
    records = {}
    for student in entries:
        rec = read_json(out / "results" / f"{student}.json")
        if rec and rec.get("sha256") == hashes[student] and rec.get("fingerprint") == fingerprint:
            records[student] = rec
    errors = {s: read_json(out / "errors" / f"{s}.json") or {} for s in entries if s not in records}
    names = assignment.exercises
    # a row the grader could not grade still shows what it was out of: the class's maximum (the same machine)
    top = max((r["max"] for r in records.values()), default=assignment.max_points())
    gradebook, lms = io.StringIO(), io.StringIO()
    writer, lms_writer = csv.writer(gradebook, lineterminator="\n"), csv.writer(lms, lineterminator="\n")
    writer.writerow(_row(["student", "entry", *names, "total", "max", "status", "submitted", "time_source", "late",
                          "claimed_time", "flags", "notes"]))
    lms_writer.writerow(_row(["student", f"{assignment.name} ({top:g})"]))
    for student, entry in entries.items():
        rec = records.get(student)
        when = [entry.submitted, entry.time_source, _late(entry, due), entry.claimed]
        nbgrader_note = say("nbgrader could not process the notebook ({why}): its points were written into "
                            "gradebook.db directly", why=messages.verbatim(nbgrader[entry.folder])) \
            if nbgrader.get(entry.folder) else ""
        entry_note = say.render(entry.note) if entry.note else ""
        if rec is None:
            error = errors.get(student) or {}
            reason = _said(error.get("message"), error.get("error", ""))
            not_graded = say("not graded: {reason}", reason=reason) if reason else say("not graded")
            writer.writerow(_row([student, entry.name, *[""] * len(names), "", f"{top:g}", "error", *when, "",
                                  "; ".join(filter(None, [entry_note, not_graded]))]))
            lms_writer.writerow(_row([student, ""]))
            continue
        refused = say.render(_said(rec.get("refused_message"), rec.get("refused", ""))) if rec.get("refused") else ""
        notes = "; ".join(filter(None, [entry_note, refused, nbgrader_note]))
        writer.writerow(_row([student, entry.name, *[f"{rec['exercises'].get(n, {}).get('score', 0):g}" for n in names],
                              f"{rec['total']:g}", f"{rec['max']:g}", "refused" if rec.get("refused") else "graded",
                              *when, "; ".join(rec["flags"]), notes]))
        lms_writer.writerow(_row([student, f"{rec['total']:g}"]))
    write_atomic(out / "gradebook.csv", gradebook.getvalue())
    write_atomic(out / "gradebook_checks.csv", checks_gradebook(entries, records, assignment.checks))
    write_atomic(out / "lms.csv", lms.getvalue())
    write_json(out / "manifest.json", {
        "fingerprint": fingerprint, "assignment": assignment.name,
        "students": {s: {"entry": entries[s].name, "sha256": hashes[s],
                         "status": "graded" if s in records else "error",
                         "total": records[s]["total"] if s in records else None,
                         "max": records[s]["max"] if s in records else top,
                         "submitted": entries[s].submitted, "time_source": entries[s].time_source,
                         "late": _late(entries[s], due), "claimed_time": entries[s].claimed,
                         "note": str(entries[s].note),
                         "run_id": records[s]["run_id"] if s in records else None,
                         "result": f"results/{s}.json" if s in records else f"errors/{s}.json"}
                     for s in entries}})
    summary = class_summary(records, errors, assignment.checks, names)
    summary["assignment"] = {"name": assignment.name, "title": assignment.title, "max": top}
    summary["late"] = sorted(s for s, e in entries.items() if _late(e, due) == "late")
    summary["refused"] = {s: r["refused"] for s, r in sorted(records.items()) if r.get("refused")}
    summary["renamed"] = {s: str(e.note) for s, e in entries.items() if e.note}
    if nbgrader:
        summary["nbgrader"] = {s: e.folder for s, e in entries.items() if e.folder in nbgrader}  # recorded there
        summary["nbgrader_unprocessed"] = {s: nbgrader[e.folder] for s, e in entries.items() if nbgrader.get(e.folder)}
    write_json(out / "summary.json", summary)
    write_atomic(out / "summary.md", summary_markdown(summary))
    if plots:
        plot(out / "plots", summary)
    return summary


def checks_gradebook(entries, records, checks):
    """gradebook_checks.csv: a row per student, a column per check (its key, `<exercise>.<id>`), each cell the
    points it scored ("" where it was not graded, or skipped: worth nothing here); then total and max."""
    keys = [c.key for c in checks]
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(_row(["student", *keys, "total", "max"]))
    for student in entries:
        rec = records.get(student)
        if rec is None:
            writer.writerow(_row([student, *[""] * len(keys), "", ""]))
            continue
        scored = {c["key"]: c for c in rec["checks"] if c["status"] != Status.SKIPPED}
        writer.writerow(_row([student, *[f"{scored[k]['score']:g}" if k in scored else "" for k in keys],
                              f"{rec['total']:g}", f"{rec['max']:g}"]))
    return text.getvalue()


def class_summary(records, errors, checks, order=()):
    totals = [r["total"] for r in records.values()]
    top = max((r["max"] for r in records.values()), default=0)
    per_check = {c.key: {"exercise": c.exercise, "name": c.name, "public": c.public, "passed": 0, "failed": 0,
                         "not implemented": 0, "skipped": 0, "mistakes": Counter()} for c in checks}
    for rec in records.values():
        for c in rec["checks"]:
            row = per_check.get(c["key"])
            if row is None or c["status"] not in row:
                continue
            row[c["status"]] += 1
            if c["status"] == Status.FAILED:
                row["mistakes"][c["mistake"] or c["feedback"].split(". Hint")[0][:160]] += 1
    rows = []
    for key, row in per_check.items():
        attempted = row["passed"] + row["failed"]
        rows.append({"key": key, "exercise": row["exercise"], "name": row["name"], "public": row["public"],
                     "attempted": attempted, "failed": row["failed"], "not_implemented": row["not implemented"],
                     "failure_rate": round(row["failed"] / attempted, 4) if attempted else None,
                     "common_mistakes": row["mistakes"].most_common(3)})
    per_exercise = {}
    for rec in records.values():
        for name, ex in rec["exercises"].items():
            e = per_exercise.setdefault(name, {"max": ex["max"], "scores": []})
            e["max"] = max(e["max"], ex["max"])
            e["scores"].append(ex["score"])
    return {
        "submissions": len(records) + len(errors), "graded": len(records), "errors": sorted(errors),
        "max": top, "mean": round(statistics.fmean(totals), 3) if totals else None,
        "median": statistics.median(totals) if totals else None, "totals": sorted(totals),
        "exercises": {n: {"max": per_exercise[n]["max"], "mean": round(statistics.fmean(per_exercise[n]["scores"]), 3),
                          "full_marks": sum(s == per_exercise[n]["max"] > 0 for s in per_exercise[n]["scores"]),
                          "zero": sum(s == 0 for s in per_exercise[n]["scores"])}
                      for n in [*order, *sorted(set(per_exercise) - set(order))] if n in per_exercise},
        "checks": rows,
        "flagged": {s: r["flags"] for s, r in sorted(records.items()) if r["flags"]},
    }


def summary_markdown(s):
    lines = [f"# Class summary: {markdown(s['assignment']['title'])}" if s.get("assignment") else "# Class summary", "",
             f"{s['graded']} of {s['submissions']} submissions graded"
             + (f"; not graded (see errors/): {', '.join(markdown(e) for e in s['errors'])}" if s["errors"] else "")
             + ".", ""]
    if s["graded"]:
        lines += [f"Total: mean {s['mean']:g}, median {s['median']:g}, out of {s['max']:g}.", "",
                  "![score histogram](plots/score_histogram.png)", "",
                  "| exercise | mean | max | full marks | zero |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {n} | {e['mean']:g} | {e['max']:g} | {e['full_marks']} | {e['zero']} |"
                  for n, e in s["exercises"].items()]
        hard = sorted((r for r in s["checks"] if r["failure_rate"]), key=lambda r: -r["failure_rate"])[:15]
        lines += ["", "## What the class struggles with", "",
                  "Failure rate among submissions that implemented the exercise; the most common reason.", "",
                  "![failure rate per check](plots/check_failure_rates.png)", "",
                  "| check | failed | most common reason |", "| --- | --- | --- |"]
        for r in hard:
            reason = markdown(r["common_mistakes"][0][0], REPORT.title_chars) if r["common_mistakes"] else ""
            lines.append(f"| {markdown(r['exercise'])}: {markdown(r['name'])} | {r['failed']}/{r['attempted']} "
                         f"({100 * r['failure_rate']:.0f}%) | {reason} |")
    if s.get("refused"):
        lines += ["", "## Refused (a zero out of the full maximum)", ""]
        lines += [f"- {markdown(student)}: {markdown(reason)}" for student, reason in s["refused"].items()]
    if s.get("renamed"):
        lines += ["", "## Notes on entries", ""]
        lines += [f"- {markdown(student)}: {markdown(note)}" for student, note in s["renamed"].items()]
    if s.get("late"):
        lines += ["", f"## Late ({len(s['late'])})", "", ", ".join(markdown(x) for x in s["late"])]
    if s.get("nbgrader_unprocessed"):
        lines += ["", "## nbgrader could not process (points written into gradebook.db directly)", ""]
        lines += [f"- {markdown(student)}: {markdown(why)}" for student, why in s["nbgrader_unprocessed"].items()]
    if s["flagged"]:
        lines += ["", "## Flagged for a look", "",
                  "Code that reaches for the process or the grader (found by reading, not running, it):", ""]
        lines += [f"- {markdown(student)}: {', '.join(markdown(f) for f in found)}"
                  for student, found in s["flagged"].items()]
    return "\n".join(lines) + "\n"


def plot(folder, s):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    ax.hist(s["totals"], bins=min(30, max(5, len(set(s["totals"])))), range=(0, max(s["max"], 1)),
            color="#4C72B0", edgecolor="white")
    ax.set_xlabel(f"total score (out of {s['max']:g})")
    ax.set_ylabel("submissions")
    ax.set_title(f"Scores of {s['graded']} submissions")
    _save(fig, plt, folder / "score_histogram.png")

    rows = sorted((r for r in s["checks"] if r["attempted"]), key=lambda r: -r["failure_rate"])[:30][::-1]
    labels = [_shorten(f"{r['exercise']}: {r['name']}", 80) for r in rows]
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(rows) + 1.6), layout="constrained")
    ax.barh(range(len(rows)), [100 * r["failure_rate"] for r in rows], color="#C44E52")
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    for y, r in enumerate(rows):
        ax.text(100 * r["failure_rate"] + 1, y, f"{r['failed']}/{r['attempted']}", va="center", fontsize=7)
    ax.set_xlim(0, 112)
    ax.set_xlabel("failed, % of submissions that implemented the exercise")
    ax.set_title("Failure rate per check (30 hardest)")
    _save(fig, plt, folder / "check_failure_rates.png")


def _shorten(text, n):
    return text if len(text) <= n else text[:n - 1] + "…"


def _save(fig, plt, path):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)  # constrained layout keeps every label inside the figure
    plt.close(fig)
    write_atomic(path, buffer.getvalue())
