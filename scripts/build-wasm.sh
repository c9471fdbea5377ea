#!/usr/bin/env bash
# Builds the WebAssembly SIMD kernels (kernels/wasm/*.c) into two modules, the same on every
# platform and checked in:
#   simd128.wasm       SIMD128 only (every Node >= 20.19)
#   relaxed-simd.wasm  plus relaxed SIMD (FMA), chosen at load time where the engine validates it
# and writes kernels/wasm/manifest.json: the compiler, the flags, and the SHA-256 of every source,
# of this script and of each module. test/unit/cpu-simd/wasm-build.test.ts checks the manifest
# against the files (no compiler needed) and, where clang-19 is installed, rebuilds and compares
# the bytes. Needs clang-19 and lld-19 (Debian bookworm: apt-get install clang-19 lld-19).
#
# Usage: scripts/build-wasm.sh [OUT_DIR]   (default kernels/wasm; the manifest goes there too)
set -euo pipefail
export LC_ALL=C
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/kernels/wasm"
out="${1:-$src}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

clang="${CLANG:-clang-19}"
command -v "$clang" >/dev/null || { echo "build-wasm: $clang not found (apt-get install clang-19 lld-19)" >&2; exit 1; }
version="$("$clang" --version | head -n 1)"

# -ffp-contract=off: a*b+c stays two roundings unless a kernel writes FMA() (relaxed build only).
# -matomics -mbulk-memory: required for a shared memory; the module imports the one memory every
# thread instantiates it with. The stack pointer is exported so each worker points it at its own
# stack; __heap_base tells the loader where the heap may start.
cflags=(--target=wasm32 -O3 -std=c11 -ffreestanding -nostdlib -fno-builtin-memcpy -ffp-contract=off
        -msimd128 -matomics -mbulk-memory -mnontrapping-fptoint -Wall -Wextra -Werror
        "-ffile-prefix-map=$src=.")
ldflags=(-Wl,--no-entry -Wl,--import-memory -Wl,--shared-memory -Wl,--max-memory=4294967296
         -Wl,--initial-memory=2097152 -Wl,-z,stack-size=131072 -Wl,--export=__stack_pointer
         -Wl,--export=__heap_base -Wl,--strip-all)

mapfile -t sources < <(cd "$src" && ls *.c | sort)
mapfile -t headers < <(cd "$src" && ls *.h | sort)

build() {  # name, extra flags...
  local name=$1
  shift
  (cd "$src" && "$clang" "${cflags[@]}" "$@" "${ldflags[@]}" "${sources[@]}" -o "$out/$name.wasm")
}
build simd128
build relaxed-simd -mrelaxed-simd

sha() { sha256sum "$1" | cut -d' ' -f1; }
json_list() { local first=1; printf '['; for x in "$@"; do [ $first -eq 1 ] || printf ', '; first=0; printf '"%s"' "$x"; done; printf ']'; }
{
  printf '{\n  "compiler": "%s",\n' "$version"
  printf '  "cflags": %s,\n' "$(json_list "${cflags[@]/$src/<kernels/wasm>}")"
  printf '  "ldflags": %s,\n' "$(json_list "${ldflags[@]}")"
  printf '  "sources": {\n'
  files=("${sources[@]}" "${headers[@]}")
  for i in "${!files[@]}"; do
    sep=','; [ "$i" -eq $((${#files[@]} - 1)) ] && sep=''
    printf '    "%s": "%s"%s\n' "${files[$i]}" "$(sha "$src/${files[$i]}")" "$sep"
  done
  printf '  },\n  "script": "%s",\n' "$(sha "$root/scripts/build-wasm.sh")"
  printf '  "modules": {\n'
  printf '    "simd128": { "file": "simd128.wasm", "extraFlags": [], "sha256": "%s" },\n' "$(sha "$out/simd128.wasm")"
  printf '    "relaxed-simd": { "file": "relaxed-simd.wasm", "extraFlags": ["-mrelaxed-simd"], "sha256": "%s" }\n' "$(sha "$out/relaxed-simd.wasm")"
  printf '  }\n}\n'
} > "$out/manifest.json"
echo "build-wasm: wrote $out/simd128.wasm ($(stat -c %s "$out/simd128.wasm") bytes), $out/relaxed-simd.wasm ($(stat -c %s "$out/relaxed-simd.wasm") bytes), $out/manifest.json"
