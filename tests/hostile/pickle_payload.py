"""Return an object whose unpickling runs code (it would create __MARKER__); it must never be unpickled."""
import os


class Payload:
    def __reduce__(self):
        return (os.system, ("touch __MARKER__",))


class Smuggler(dict):
    def __reduce__(self):
        return (os.system, ("touch __MARKER__",))


def shift_matrix(k, d_model, base=10000.0):
    return Payload() if k % 2 else [Payload(), Smuggler()]
