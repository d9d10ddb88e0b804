#!/usr/bin/env bash
# The course as a static website, in English and Chinese, from the chapter sources: _build/book/en/ and
# _build/book/zh/ (open index.html; nothing is loaded from the network). Needs the `book` extra
# (bash scripts/setup.sh book) and Debian's libjs-mathjax. Options (book/build.py):
#   --lang en zh            the editions to build (default both)
#   --chapters 00 01 ...    these chapters only
#   --assignment            the edition without solutions (student notebooks; leak-checked)
#   --update-po             update the catalogs from the chapters instead (changed paragraphs become fuzzy)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
[ -x "$PY" ] || die "no course environment: run  bash scripts/setup.sh book  first"
exec "$PY" book/build.py "$@"
