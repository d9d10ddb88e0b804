"""Forge report lines: an exception message (a note, and a check's feedback) holding newlines followed by what
a report prints, a fake total among them. Stopped by every learner-controlled text being written as one line."""
raise RuntimeError("oops\n\nTotal: 999 / 999   (0.1 s)\nAll checks passed")


def shift_matrix(k, d_model, base=10000.0):
    raise ValueError("d_model\nTotal: 999 / 999")
