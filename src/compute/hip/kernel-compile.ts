/**
 * How one specialisation of a portable `kernels/` source becomes a HIP code
 * object: the CUDA backend's sources and defines, plus the target and its
 * wavefront size (GC_WARP_SIZE, which portable.cuh checks against the
 * compiler's own). Needs hiprtc but no GPU, so CI compiles every portable
 * specialisation for a wave64 and a wave32 target.
 */
import { InvalidArgumentError } from '../../errors.js';
import { defaultWavefrontSize, parseGfxTarget } from '../../hip/gfx-target.js';
import { HipProgram, type CompiledHipProgram } from '../../hip/hip-program.js';
import type { KernelCache } from '../../nvrtc/kernel-cache.js';
import type { KernelSources, ModuleSpec } from '../gpu/kernel-sources.js';
import { cudaOnlyReason } from '../gpu/kernel-portability.js';

/** How to compile a module spec for HIP. */
export interface HipKernelCompileOptions {
  /** Target ID, e.g. `gfx90a`; the wavefront size follows from it. */
  target: string;
  /** Kernel cache; default the shared one. */
  cache?: KernelCache | false;
}

/**
 * Compiles a portable specialisation for a HIP target.
 * @throws InvalidArgumentError for a CUDA-only source or a target hiprtc does not know.
 */
export function compileHipKernelModule(spec: ModuleSpec, sources: KernelSources, options: HipKernelCompileOptions): CompiledHipProgram {
  const reason = cudaOnlyReason(spec.file);
  if (reason !== undefined) throw new InvalidArgumentError(`${spec.file} is CUDA-only (${reason}); it has no HIP build`);
  const warpSize = defaultWavefrontSize(parseGfxTarget(options.target).processor);
  return new HipProgram(sources.source(spec.file), {
    name: spec.file,
    headers: sources.headers(),
    defines: { ...(spec.defines ?? {}), GC_WARP_SIZE: warpSize },
    target: options.target,
    std: 'c++17',
    ...(options.cache === undefined ? {} : { cache: options.cache }),
  }).compile();
}
