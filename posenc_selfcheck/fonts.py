"""A CJK font for the Chinese notebooks' figures: matplotlib's default font (DejaVu Sans) has no Chinese
characters and draws each one as an empty box. The Chinese notebooks' setup cell calls `use_cjk_font()`."""

from __future__ import annotations

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
        print(f"没有找到中文字体，图中的汉字会显示成方框：请安装 {PACKAGE}（Debian/Ubuntu：sudo apt-get install "
              f"{PACKAGE}），再重启内核。")
        return None
    rcParams["font.family"] = "sans-serif"
    rcParams["font.sans-serif"] = [found, *[name for name in rcParams["font.sans-serif"] if name != found]]
    return found
