#!/usr/bin/env bash
# One GPU-machine session, in the order METHOD.md asks for: correctness first (every GPU test,
# the demo, compute-sanitizer over every compute kernel), then the benchmarks with their anchors.
# Run from the project root on a machine where `.device-pack/` was carried:
#   bash bench/gpu-session.sh tests|sanitize|checks|bench|all [bench names]   (logs go to $OUT, default ./bench/results)
# tests: every GPU test and the conformance suite on every present backend, the demo and the example;
# sanitize: compute-sanitizer (memcheck, racecheck, synccheck) over every kernel; checks: both; bench: the benchmarks (all, or those named).
set -uo pipefail
part=${1:-all}
out=${OUT:-bench/results}
mkdir -p "$out"
source .device-pack/setup.sh
export PYTHONUNBUFFERED=1
# Warm the kernel cache inside this machine only.
export GPUCOMPUTE_CACHE_DIR=${GPUCOMPUTE_CACHE_DIR:-/tmp/gpucompute-cache}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$out/gpu.txt"

sanitizer() {  # tool, log name, script and its arguments
  local tool=$1 name=$2
  shift 2
  local extra=()
  [ "$tool" = memcheck ] && extra=(--report-api-errors no)
  compute-sanitizer --tool "$tool" "${extra[@]}" --print-limit 20 node --import tsx "$@" 2>&1 | tail -4 | tee "$out/sanitizer-$name.log"
}

# Builds every module the tests, sanitizer drivers and benchmarks ask for on all cores first (NVRTC
# seconds each; worker threads, one per core). The GPU test projects' global setup would do it too.
precompile() {
  tsx bench/precompile.ts > "$out/precompile.log" 2>&1
  grep -A 1000 "^precompile " "$out/precompile.log"
}

tests() {
  tsx src/cli/main.ts info 2>&1 | tee "$out/info.txt"
  precompile
  vitest run --project gpu --project conformance 2>&1 | tee "$out/gpu-tests.log"
  tsx demo/main.ts 2>&1 | tee "$out/demo.log"
  tsx examples/hybrid-trainer.ts 2>&1 | tee "$out/hybrid-trainer.log"
}

sanitize() {
  # The drivers side by side (each its own process and log): memcheck, racecheck and synccheck.
  for tool in memcheck racecheck synccheck; do
    # racecheck and synccheck look at shared memory and barriers only: the kernels that use them.
    if [ "$tool" = memcheck ]; then scope=(); else scope=(--shared-memory-only); fi
    sanitizer $tool compute-$tool test/gpu/compute/exercise-kernels.ts "${scope[@]}" &
    sanitizer $tool attention-$tool test/gpu/attention/sanitize.ts --defaults &
    sanitizer $tool gru-$tool test/gpu/gru/sanitize.ts fused steps persistent &
    sanitizer $tool svd-$tool test/gpu/svd/sanitize.ts &
    sanitizer $tool attention-backward-$tool test/gpu/training/sanitize-attention-backward.ts --defaults &
    sanitizer $tool gru-backward-$tool test/gpu/training/sanitize-gru-backward.ts &
  done
  wait
  # matmul: every kernel of the configuration sweep, in 12 shards side by side, for each tool.
  for tool in memcheck racecheck synccheck; do
    for i in $(seq 0 11); do
      compute-sanitizer --tool "$tool" --print-limit 20 node --import tsx test/gpu/matmul/sanitize.ts --shard "$i/12" > "$out/sanitizer-matmul-$tool-$i.log" 2>&1 &
    done
    wait
  done
  tail -n 2 "$out"/sanitizer-matmul-*.log
}

bench() {
  local names=("$@")
  [ ${#names[@]} -gt 0 ] || names=(launch ops matmul attention gru training svd)
  for b in "${names[@]}"; do
    [ -f "bench/$b.ts" ] && tsx "bench/$b.ts" 2>&1 | tee "$out/bench-$b.log"
  done
  cp bench/results/*.json bench/results/*.svg "$out/" 2>/dev/null || true
}

shift || true
case "$part" in
  tests) tests ;;
  sanitize) sanitize ;;
  checks) tests; sanitize ;;
  bench) bench "$@" ;;
  all) tests; sanitize; bench ;;
  *) echo "usage: bash bench/gpu-session.sh tests|sanitize|checks|bench|all [bench names]" >&2; exit 2 ;;
esac
