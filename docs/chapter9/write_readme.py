"""docs/chapter9/README.md, written from README.in.md and results.json: every number it quotes is a placeholder
filled from the measurement ({{path.to.value}} or {{path.to.value:format}}, as a chapter's text; the reduced and ci
runs' results, stored beside it as reduced_results.json and ci_results.json, under "reduced" and "ci"), and {{table}}
is the table of every row at every length. Run after the full run:

    python docs/chapter9/write_readme.py

(a tool of the course's repository, beside what it writes: it uses the course build's filler, which the learner's
side never imports; tests/test_ch09_lab.py checks that the README is what this writes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parent  # docs/chapter9
sys.path.insert(0, str(FOLDER.parents[1]))  # the repository root: grader


def table(results):
    """The loss of every row at every length, as Markdown (English: the README is English)."""
    ext = results["extrapolation"]
    factors = [n // results["config"]["train_len"] for n in ext["lengths"]]
    head = "| row | " + " | ".join(f"{f} L" if f > 1 else "L" for f in factors) + " |\n"
    head += "| --- " * (len(factors) + 1) + "|\n"
    return head + "\n".join(f"| {name} | " + " | ".join(f"{v:.2f}" for v in losses) + " |"
                            for name, losses in ext["loss"].items())


def render(folder):
    from grader.render import fill

    folder = Path(folder)
    results = json.loads((folder / "results.json").read_text())
    for run in ("reduced", "ci"):  # the smaller runs' results.json, kept for their times: {{reduced.seconds}}
        path = folder / f"{run}_results.json"
        if path.exists():
            results[run] = json.loads(path.read_text())
    template = (folder / "README.in.md").read_text()
    return fill(template.replace("{{table}}", table(results)), results, where=str(folder / "README.in.md"))


def main(folder=FOLDER):
    (folder / "README.md").write_text(render(folder))
    print(f"wrote {folder / 'README.md'}")


if __name__ == "__main__":
    main()
