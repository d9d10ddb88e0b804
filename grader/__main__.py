import os
import sys

from .cli import main

code = main()
# Everything is written (files atomically, with fsync): leave without tearing torch down module by
# module, which takes longer than the grading of a small notebook. The sandbox goes first.
from .sandbox import zygote  # noqa: E402

zygote.close_all()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code or 0)
