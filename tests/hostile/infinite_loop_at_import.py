"""An infinite loop at import that swallows the statement timeout: the wall clock ends the process, the
statement is skipped on a retry, and the rest is graded."""


def _spin():
    while True:
        try:
            while True:
                pass
        except BaseException:
            continue


_never = _spin()
