/**
 * Finds and compiles the checked-in WebAssembly kernels (`kernels/wasm/`, built by
 * `scripts/build-wasm.sh`), once per process and variant.
 *
 * Two builds exist: `simd128` runs on every supported Node; `relaxed-simd` also uses relaxed
 * SIMD's FMA (`f32x4.relaxed_madd`) in sgemm, attention and the polynomials. The relaxed build is
 * chosen when the engine validates relaxed SIMD: Node 22+ does by default; Node 20 (V8 11.3) does
 * once `--experimental-wasm-relaxed-simd` is set, which `v8.setFlagsFromString` does here before
 * compiling (NODE_OPTIONS refuses that flag; V8's flags are process-wide, so workers instantiating
 * the compiled module need nothing more). `GPUCOMPUTE_CPU_SIMD=simd128` forces the plain build.
 *
 * V8 compiles wasm lazily, each function with its baseline compiler (Liftoff) on first call,
 * and moves hot ones to TurboFan only for their next call: a kernel called once on a large
 * tensor would run entirely on baseline code (gelu over 2^21 elements: 11.8 ms the first time,
 * 4.5 ms once optimised). The kernels are therefore compiled up front with TurboFan (about 15 ms
 * for the whole module, once per process), the two flags set around that one compile and put
 * back to V8's defaults unless the process was started with them.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { InvalidArgumentError } from '../../../errors.js';
import { wasm, type WasmModule } from './wasm-api.js';

/** Which build of the kernels runs. */
export type SimdVariant = 'relaxed-simd' | 'simd128';

/** The environment variable that forces a build (`simd128`), for tests and CI. */
export const SIMD_VARIANT_ENV = 'GPUCOMPUTE_CPU_SIMD';

/**
 * `kernels/wasm/` at the package root: this file lives in `src/compute/cpu/simd/` (tsx, vitest)
 * or `dist/compute/cpu/simd/` (built), four levels down in both cases.
 */
export function wasmKernelsDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'kernels', 'wasm');
}

/** (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd) */
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, // type: (v128 v128 v128) -> v128
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b, // body
]);

let relaxedChecked: boolean | undefined;

/**
 * Whether this process's engine takes relaxed SIMD, enabling V8's flag first where it is still
 * experimental (Node 20).
 */
export function relaxedSimdSupported(): boolean {
  if (relaxedChecked === undefined) {
    relaxedChecked = wasm.validate(RELAXED_PROBE);
    if (!relaxedChecked) {
      setFlagsFromString('--experimental-wasm-relaxed-simd');
      relaxedChecked = wasm.validate(RELAXED_PROBE);
    }
  }
  return relaxedChecked;
}

/** The build that runs unless asked otherwise: the env var's, else relaxed where supported. */
export function defaultSimdVariant(): SimdVariant {
  const forced = process.env[SIMD_VARIANT_ENV];
  if (forced !== undefined && forced !== '') {
    if (forced !== 'simd128' && forced !== 'relaxed-simd') {
      throw new InvalidArgumentError(`${SIMD_VARIANT_ENV} must be 'simd128' or 'relaxed-simd', got ${JSON.stringify(forced)}`);
    }
    if (forced === 'simd128') return 'simd128';
  }
  return relaxedSimdSupported() ? 'relaxed-simd' : 'simd128';
}

const compiled = new Map<SimdVariant, WasmModule>();

/**
 * The compiled kernels of a build (compiled on first use, then shared by every runtime and
 * worker of the process).
 * @throws InvalidArgumentError when `relaxed-simd` is asked for on an engine without it.
 */
export function simdModule(variant: SimdVariant): WasmModule {
  let module = compiled.get(variant);
  if (!module) {
    if (variant === 'relaxed-simd' && !relaxedSimdSupported()) {
      throw new InvalidArgumentError(`this Node (${process.versions.node}, V8 ${process.versions.v8}) does not validate relaxed SIMD`);
    }
    module = compileOptimised(readFileSync(join(wasmKernelsDir(), `${variant}.wasm`)));
    compiled.set(variant, module);
  }
  return module;
}

/** V8's flags that make a compile lazy and tiered, which {@link compileOptimised} turns off for its compile. */
const TIERING_FLAGS = ['wasm-lazy-compilation', 'wasm-dynamic-tiering'] as const;

/** Compiles every function of `bytes` with TurboFan now (see the file comment). */
function compileOptimised(bytes: Uint8Array): WasmModule {
  const chosen = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const ours = TIERING_FLAGS.filter((flag) => !chosen.some((arg) => arg.replace(/_/g, '-').endsWith(flag)));
  for (const flag of ours) setFlagsFromString(`--no-${flag}`);
  try {
    return new wasm.Module(bytes);
  } finally {
    for (const flag of ours) setFlagsFromString(`--${flag}`);
  }
}
