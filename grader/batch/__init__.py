"""python -m grader batch FOLDER --jobs N --out DIR: a class's submissions to a gradebook.

FOLDER holds one entry per student: a notebook, a .py file, or a folder of them (its name, without
the suffix, is the student's id), or nbgrader's `submitted/<student>/<assignment>/` layout
(discovery.py). Each submission is graded by grader.grading in one of N worker processes
(worker.py); each worker keeps one zygote for its life and grades every submission in a fresh
session forked from it, so nothing of one student reaches another (scheduling.py hands out the work).

    DIR/results/<id>.json     per student: every check's status, score and feedback, totals, notes
    DIR/feedback/<id>.txt     the report the student reads
    DIR/errors/<id>.json      submissions the grader could not grade this time (retried next run)
    DIR/manifest.json         index of the above, with the grader's fingerprint
    DIR/gradebook.csv         a row per student, a column per exercise, the total
    DIR/gradebook_checks.csv  a row per student, a column per check (its key, <exercise>.<id>), the total
    DIR/summary.md, .json     class statistics: scores, failure rate per check, common mistakes
    DIR/plots/*.png           score histogram, failure rate per check
    DIR/run.json              this run: times, workers, peak memory

Resumable: every file is written atomically (temporary file, fsync, rename), and a result is reused
when its submission's SHA-256 and the grader's fingerprint (a hash of the grader, the checks, the
reference and the probes) are unchanged. Kill a run at any moment and start it again: what was
graded is kept, what was not is graded, nothing twice. Deterministic: a grade depends only on the
submission and the grader (seeded probes, one thread, PYTHONHASHSEED=0 in the sandbox).

A submission that cannot be graded (a link, nothing gradable, too large) is a graded zero with its
reason; a submission that breaks a worker is recorded in errors/ and the run goes on.
"""
