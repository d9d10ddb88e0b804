"""The sandbox's own failure, as the grader sees it."""


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the learner's code): grading cannot go on. `message` says why: text, or a
    message (posenc_selfcheck/messages.py) where the user is told what to do (a mode this machine refuses); str()
    its English."""

    def __init__(self, message):
        super().__init__(str(message))
        self.message = message
