"""Every chapter's properties module (properties.py imports them from here).

Generated from course/*/properties.py by `python -m grader build`: edit there.
"""

from . import (
    properties_ch03,
    properties_ch04,
    properties_ch07,
    properties_ch08,
)

MODULES = (
    properties_ch03,
    properties_ch04,
    properties_ch07,
    properties_ch08,
)
