"""At import: leave 128 MB of files in /dev/shm (memory until someone deletes them) and /tmp, in files
under the file-size limit. Stopped by the jail (private, size-limited /tmp and /dev/shm that vanish
with it) and Landlock (writes only in the working folder); as root without Landlock, the clean-up
after each child removes the sandbox uid's files (confine.remove_files_of)."""
import os

_left, _refused = [], []
for _folder in ("/dev/shm", "/tmp"):
    for _n in range(2):
        _path = f"{_folder}/posenc-hoard-__RUN__-{os.getpid()}-{_n}"
        try:
            with open(_path, "wb") as _f:
                _f.write(b"\x01" * (32 << 20))
            _left.append(_path)
        except OSError as _exc:
            _refused.append(type(_exc).__name__)


def shift_matrix(k, d_model, base=10000.0):
    if _left:
        raise RuntimeError("LEFT " + " ".join(_left))
    raise RuntimeError("BLOCKED " + " ".join(sorted(set(_refused))))
