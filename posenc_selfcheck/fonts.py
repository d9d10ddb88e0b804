"""A CJK font for the Chinese notebooks' figures: matplotlib's default font (DejaVu Sans) has no Chinese
characters and draws each one as an empty box. The Chinese notebooks' setup cell calls `use_cjk_font()`."""

from __future__ import annotations

from .messages import msg, render

PACKAGE = "fonts-noto-cjk"  # the Debian/Ubuntu package with Noto Sans CJK
# the first one installed is used: Noto (Linux), then the fonts macOS and Windows ship
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei", "PingFang SC",
             "Microsoft YaHei", "SimHei")


def use_cjk_font():
    """Put the first installed font of CJK_FONTS first in matplotlib's sans-serif list (the others stay behind it
    for what it lacks) and return its name; where none is installed, say once which package provides one and
    return None (the default font stays)."""
    from matplotlib import font_manager, rcParams

    installed = {font.name for font in font_manager.fontManager.ttflist}
    found = next((name for name in CJK_FONTS if name in installed), None)
    if found is None:
        print(render(msg("no Chinese font found: Chinese characters in figures show as empty boxes. Install {package} "
                         "(Debian/Ubuntu: `sudo apt-get install {package}`), then restart the kernel.",
                         package=PACKAGE)))
        return None
    rcParams["font.family"] = "sans-serif"
    rcParams["font.sans-serif"] = [found, *[name for name in rcParams["font.sans-serif"] if name != found]]
    return found
