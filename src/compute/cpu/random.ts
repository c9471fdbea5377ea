/**
 * Seeded random fill and dropout on the CPU, from the Philox stream shared
 * with the GPU (see philox.ts and the Backend contract for the exact formulas).
 */
import type { TensorView } from '../core/view.js';
import { floatTarget, loadFloat, storeFloat } from './element-io.js';
import { philoxNormals, philoxWords, wordToUniform } from './philox.js';

const fround = Math.fround;

export function random(out: TensorView, kind: 'uniform' | 'normal', seed: number, a: number, b: number): void {
  const dst = floatTarget(out);
  if (kind === 'uniform') {
    const words = new Uint32Array(out.size);
    philoxWords(seed, words);
    // Same f32 operations, in the same order and without FMA, as the GPU kernel.
    const low = fround(a);
    const span = fround(fround(b) - low);
    for (let i = 0; i < words.length; i++) dst[i] = fround(low + fround(span * wordToUniform(words[i]!)));
  } else {
    const normals = new Float64Array(out.size);
    philoxNormals(seed, normals);
    for (let i = 0; i < normals.length; i++) dst[i] = a + b * normals[i]!;
  }
  storeFloat(out, dst);
}

export function dropout(x: TensorView, out: TensorView, p: number, seed: number): void {
  const src = loadFloat(x);
  const dst = floatTarget(out);
  const words = new Uint32Array(x.size);
  philoxWords(seed, words);
  const threshold = fround(p);
  const scale = fround(1 / (1 - p));
  for (let i = 0; i < words.length; i++) dst[i] = wordToUniform(words[i]!) >= threshold ? src[i]! * scale : 0;
  storeFloat(out, dst);
}
