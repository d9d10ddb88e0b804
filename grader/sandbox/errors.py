"""The sandbox's own failure, as the grader sees it."""


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the learner's code): grading cannot go on."""
