/**
 * The op codes of codes.ts against the core op tables (every op has one) and against the enums of
 * kernels/wasm/ops.h and the dtype enum of common.h (the same numbers on both sides).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DTYPES } from '../../../src/compute/core/dtype.js';
import { ACTIVATION_GRAD_OPS, BINARY_OP_NAMES, UNARY_OP_NAMES } from '../../../src/compute/core/elementwise-ops.js';
import { MATMUL_ACTIVATIONS } from '../../../src/compute/core/matmul-plan.js';
import { REDUCE_OP_NAMES } from '../../../src/compute/core/reduce-plan.js';
import { BINARY_CODE, DTYPE_CODE, GRAD_CODE, REDUCE_CODE, UNARY_CODE, activationCode } from '../../../src/compute/cpu/simd/codes.js';
import { wasmKernelsDir } from '../../../src/compute/cpu/simd/wasm-module.js';

/** `leakyReluGrad` → `LEAKY_RELU` (the C enumerator without its prefix). */
function enumerator(name: string): string {
  return name.replace(/Grad$/, '').replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

/** Enumerators of the C enum whose members start with `prefix`, in order. */
function cEnum(file: string, prefix: string): string[] {
  const source = readFileSync(join(wasmKernelsDir(), file), 'utf8');
  const body = [...source.matchAll(/enum\s*\{([^}]*)\}/g)].map((m) => m[1]!).find((b) => b.trim().startsWith(prefix))!;
  return body.split(',').map((s) => s.split('=')[0]!.trim()).filter(Boolean).map((s) => s.slice(prefix.length));
}

describe('op codes', () => {
  it.each([
    ['unary', UNARY_OP_NAMES, UNARY_CODE, 'U_'],
    ['activation derivative', ACTIVATION_GRAD_OPS, GRAD_CODE, 'G_'],
    ['binary', BINARY_OP_NAMES, BINARY_CODE, 'B_'],
    ['reduction', REDUCE_OP_NAMES, REDUCE_CODE, 'R_'],
  ] as const)('every %s op has the code ops.h gives it', (_kind, names, codes, prefix) => {
    const c = cEnum('ops.h', prefix);
    for (const name of names) expect(c.indexOf(enumerator(name)), name).toBe((codes as Record<string, number>)[name]);
    expect(new Set(Object.values(codes)).size).toBe(names.length);
  });

  it('dtypes and matmul activations', () => {
    const c = cEnum('common.h', 'DT_');
    for (const dtype of DTYPES) expect(c.indexOf(dtype.toUpperCase()), dtype).toBe(DTYPE_CODE[dtype]);
    expect(activationCode(undefined)).toBe(-1);
    for (const a of MATMUL_ACTIVATIONS) expect(activationCode(a)).toBe(UNARY_CODE[a]);
  });
});
