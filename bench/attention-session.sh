#!/usr/bin/env bash
# One GPU-machine session for attention, correctness first: the GPU tests, the benchmark (with
# torch SDPA in the same run), then compute-sanitizer memcheck and racecheck over the kernels.
# Run from the project root where `.device-pack/` was carried; logs go to $OUT (default
# bench/results). Each step has its own time limit (seconds, overridable) so one slow step
# cannot starve the others:
#   TEST_S=120 BENCH_S=75 MEMCHECK_S=45 RACECHECK_S=40 BENCH_ARGS=--quick bash bench/attention-session.sh
set -uo pipefail
out=${OUT:-bench/results}
mkdir -p "$out"
source .device-pack/setup.sh
export PYTHONUNBUFFERED=1
export GPUCOMPUTE_CACHE_DIR=${GPUCOMPUTE_CACHE_DIR:-/tmp/gpucompute-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv > "$out/gpu.txt" 2>&1

step() { # name limit command...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - t0)) s" >> "$out/summary.txt"
}
arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
t0=$SECONDS
for i in $(seq 0 13); do tsx test/gpu/attention/warm-cache.ts "$arch" "$i" 14 >> "$out/warm.log" 2>&1 & done
wait
echo "warm $arch kernel cache: $((SECONDS - t0)) s" >> "$out/summary.txt"
step tests "${TEST_S:-120}" vitest run --reporter=verbose test/gpu/attention
step bench "${BENCH_S:-75}" tsx bench/attention.ts ${BENCH_ARGS:-}
step memcheck "${MEMCHECK_S:-45}" compute-sanitizer --tool memcheck --report-api-errors no --print-limit 10 node --import tsx test/gpu/attention/sanitize.ts
step racecheck "${RACECHECK_S:-40}" compute-sanitizer --tool racecheck --print-limit 10 node --import tsx test/gpu/attention/sanitize.ts --defaults

echo "=== $(cat "$out/gpu.txt" | tail -1)"
cat "$out/summary.txt"
echo "=== tests"
grep -E "×|FAIL|AssertionError|Error:|expected" "$out/tests.log" | head -30
grep -E "Tests |Test Files " "$out/tests.log"
echo "=== sanitizers"
for s in memcheck racecheck; do grep -E "FAIL|ERROR SUMMARY|sanitize:|Hazard|Invalid" "$out/$s.log" | head -8; done
echo "=== bench"
grep -vE "^\s*$" "$out/bench.log" | tail -60
