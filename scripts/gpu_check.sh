#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: every CUDA check (float32, float16, bfloat16) on the complete example,
# and the GPU benchmarks, into one JSON report. Where there is no GPU it says so and exits 3: it has not run.
#
#   bash scripts/gpu_check.sh [OUT_DIR]        (default out/gpu; the report is OUT_DIR/gpu_check.json)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
OUT="${1:-out/gpu}"
mkdir -p "$OUT"
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "no CUDA device here: the GPU check has NOT run" >&2
    echo '{"ran": false, "reason": "no CUDA device"}' > "$OUT/gpu_check.json"
    exit 3
fi
"$PY" -c "import torch; print('GPU:', torch.cuda.get_device_name(0), 'torch', torch.__version__)"
"$PY" -m grader grade examples/complete --cuda-only --quiet --json "$OUT/cuda_checks.json" | tee "$OUT/cuda_checks.txt"
for dtype in float32 float16 bfloat16; do
    "$PY" benchmarks/bench_rope.py --device cuda --dtype "$dtype" --repeat 50 --json "$OUT/bench_rope_$dtype.json"
done
"$PY" - "$OUT" <<'PY'
import json, sys, torch
from pathlib import Path
out = Path(sys.argv[1])
checks = json.loads((out / "cuda_checks.json").read_text())["tests"]
graded = [t for t in checks if t.get("status")]
report = {"ran": True, "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
          "cuda_checks": {"graded": len(graded), "passed": sum(t["status"] == "passed" for t in graded),
                          "failed": [{"name": t["name"], "output": t["output"]} for t in graded if t["status"] != "passed"]},
          "bench_rope": [json.loads(p.read_text()) for p in sorted(out.glob("bench_rope_*.json"))]}
(out / "gpu_check.json").write_text(json.dumps(report, indent=1) + "\n")
print(f"CUDA checks: {report['cuda_checks']['passed']} of {report['cuda_checks']['graded']} passed; "
      f"report: {out / 'gpu_check.json'}")
sys.exit(0 if not report["cuda_checks"]["failed"] else 1)
PY
