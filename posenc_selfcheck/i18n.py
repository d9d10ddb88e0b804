"""The language the self-check answers in.

`POSENC_LANG` (e.g. `zh_CN`), else the `posenc.language` of the running notebook's metadata (JupyterLab tells its
kernels the notebook's path in `JPY_SESSION_NAME`; the Chinese notebooks in notebooks/zh/ say `zh_CN`), else
English. The words themselves are messages, rendered in that language where they are shown (messages.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ENV = "POSENC_LANG"


def language():
    """The language to answer in: "en", "zh_CN", ..."""
    if os.environ.get(ENV):
        return os.environ[ENV]
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        # the path is relative to the server's root; the kernel runs in the notebook's folder
        for path in (Path(session), Path(Path(session).name)):
            try:
                return json.loads(path.read_text(encoding="utf-8"))["metadata"]["posenc"]["language"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return "en"
