#!/usr/bin/env bash
# One GPU-machine session, in the order METHOD.md asks for: correctness first (every GPU test,
# the demo, compute-sanitizer over every compute kernel), then the benchmarks with their anchors.
# Run from the project root on a machine where `.device-pack/` was carried:
#   bash bench/gpu-session.sh checks|bench|all      (logs go to $OUT, default ./bench/results)
set -uo pipefail
part=${1:-all}
out=${OUT:-bench/results}
mkdir -p "$out"
source .device-pack/setup.sh
export PYTHONUNBUFFERED=1
# Warm the kernel cache inside this machine only.
export GPUCOMPUTE_CACHE_DIR=${GPUCOMPUTE_CACHE_DIR:-/tmp/gpucompute-cache}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$out/gpu.txt"

checks() {
  tsx src/cli/main.ts info 2>&1 | tee "$out/info.txt"
  vitest run --project gpu 2>&1 | tee "$out/gpu-tests.log"
  tsx demo/main.ts 2>&1 | tee "$out/demo.log"
  compute-sanitizer --tool memcheck --report-api-errors no --print-limit 20 \
    node --import tsx test/gpu/compute/exercise-kernels.ts 2>&1 | tail -4 | tee "$out/sanitizer-memcheck.log"
  compute-sanitizer --tool racecheck --print-limit 20 \
    node --import tsx test/gpu/compute/exercise-kernels.ts --shared-memory-only 2>&1 | tail -4 | tee "$out/sanitizer-racecheck.log"
}

bench() {
  for b in launch ops matmul; do
    [ -f "bench/$b.ts" ] && tsx "bench/$b.ts" 2>&1 | tee "$out/bench-$b.log"
  done
  cp bench/results/*.json bench/results/*.svg "$out/" 2>/dev/null || true
}

case "$part" in
  checks) checks ;;
  bench) bench ;;
  all) checks; bench ;;
  *) echo "usage: bash bench/gpu-session.sh checks|bench|all" >&2; exit 2 ;;
esac
