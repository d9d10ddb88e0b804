"""Learner-controlled text made harmless for each place it is written to.

Anything that came from a submission (exception messages, file and folder names, cell labels, values
printed into feedback) may carry terminal escape codes, Markdown or HTML, CSV formulas, or sheer
length. `clean` runs once where such text enters the grader (sandbox results, submission notes);
the format-specific functions run where it leaves (terminal, Markdown, CSV, HTML).
"""

from __future__ import annotations

import html
import re
import unicodedata

from .settings import REPORT

# C0 and C1 controls (ESC starts terminal sequences), DEL, and the Unicode bidi overrides that make
# text display in another order than it reads
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2028\u2029\ufeff]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~>-])")


def _visible(match):
    return f"\\x{ord(match.group(0)):02x}" if ord(match.group(0)) < 0x100 else f"\\u{ord(match.group(0)):04x}"


def clean(text, limit=REPORT.message_chars, newlines=True):
    """Printable text: control characters shown as \\xNN (never interpreted by a terminal), at most
    `limit` characters; newlines and tabs kept unless `newlines` is False."""
    text = unicodedata.normalize("NFC", str(text))
    if not newlines:
        text = text.replace("\n", "\\n").replace("\t", " ").replace("\r", "\\r")
    text = _CONTROL.sub(_visible, text)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def one_line(text, limit=REPORT.line_chars):
    return clean(text, limit, newlines=False)


def markdown(text, limit=REPORT.message_chars):
    """Literal text inside Markdown (and the HTML a Markdown renderer allows): every special character
    escaped, newlines as spaces, so nothing becomes a link, an image, a table cell or a tag."""
    text = one_line(text, limit).replace("\\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=True))


def csv_cell(text, limit=REPORT.line_chars):
    """A CSV cell a spreadsheet shows as text: no formula (=, +, -, @, tab, CR at the start)."""
    text = one_line(text, limit)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def identifier(text, limit):
    """Letters, digits, '.', '_' and '-' only (for file names and ids); '' when nothing is left."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", unicodedata.normalize("NFKC", str(text)))[:limit].strip(".")
