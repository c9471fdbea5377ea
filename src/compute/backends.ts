/**
 * The registry: every backend, in the order `backend: 'auto'` tries them (aliases aside). Selection,
 * `selectDevice`, `gpucompute info` and the support table read this list and nothing else.
 * Adding a backend is its folder (with a `registration.ts`) and its line here.
 */
import type { BackendRegistration } from './backend/registration.js';
import { cpuRegistration } from './cpu/registration.js';
import { cudaRegistration } from './cuda/registration.js';
import { hipRegistration } from './hip/registration.js';
import { metalRegistration } from './metal/registration.js';
import { webgpuRegistration } from './webgpu/registration.js';

export const BACKENDS = [cudaRegistration, hipRegistration, webgpuRegistration, metalRegistration, cpuRegistration] as const;

/** A backend's kind: what `GpuCompute.create({ backend })` takes besides 'auto'. */
export type BackendKind = (typeof BACKENDS)[number]['kind'];

/** Every backend kind, in the order `backend: 'auto'` tries them. */
export const BACKEND_KINDS: readonly BackendKind[] = BACKENDS.map((b) => b.kind);

/** The registration of `kind`. */
export function registration(kind: BackendKind): BackendRegistration {
  return BACKENDS.find((b) => b.kind === kind)!;
}
