"""Exception messages written for the grader's readers: terminal escape codes that clear the screen and
print a fake total, Markdown and HTML for the class summary, a spreadsheet formula. Stopped by escaping
every learner-controlled string where it is written out."""


def shift_matrix(k, d_model, base=10000.0):
    raise ValueError("\x1b[2J\x1b[H\x1b[32mTotal: 278 / 278\x1b[0m <img src=x onerror=alert(1)> "
                     "| [click](http://example.invalid) =HYPERLINK(\"http://example.invalid\")")
