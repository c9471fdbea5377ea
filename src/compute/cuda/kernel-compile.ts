/**
 * How one specialisation of a `kernels/` source becomes a CUBIN through NVRTC and its disk
 * cache. Needs NVRTC but no GPU, so the same code compiles every kernel in CI.
 */
import type { KernelCache } from '../../nvrtc/kernel-cache.js';
import { Program, type CompiledProgram } from '../../nvrtc/program.js';
import type { KernelSources, ModuleSpec } from '../gpu/kernel-sources.js';

/** How to compile a module spec. */
export interface CompileKernelOptions {
  /** Target arch when the spec names none; default the device's (see the NVRTC Program). */
  arch?: string;
  /**
   * The device's arch (`sm_XY`) when it is not the current CUDA device's: the default target is
   * derived from it as for a present device, and a spec's `sm_90a` is checked against it (see the
   * NVRTC Program's `deviceArch`). Compiling ahead of time without a GPU sets it.
   */
  deviceArch?: string;
  /** Kernel cache; default the shared one. */
  cache?: KernelCache | false;
}

/**
 * Compiles one specialisation to a CUBIN (through the kernel cache), for the spec's own arch
 * where it names one. The sources are header-free (no cuda_fp16.h), so no CUDA include folder is
 * added and any NVRTC from 11.8 on compiles them. They use nothing of the CUDA runtime either, so
 * NVRTC 12.4 and later compile them with `-minimal`: the same CUBIN for one module of every
 * source, 3-5 ms less front end a module (H200, NVRTC 13.0).
 */
export function compileKernelModule(spec: ModuleSpec, sources: KernelSources, options: CompileKernelOptions = {}): CompiledProgram {
  return kernelProgram(spec, sources, options).compile();
}

/**
 * The specialisation's CUBIN when the kernel cache holds it, without compiling; `undefined`
 * otherwise. The same key {@link compileKernelModule} looks up with the same options.
 */
export function cachedKernelModule(spec: ModuleSpec, sources: KernelSources, options: CompileKernelOptions = {}): CompiledProgram | undefined {
  return kernelProgram(spec, sources, options).cached();
}

function kernelProgram(spec: ModuleSpec, sources: KernelSources, options: CompileKernelOptions): Program {
  const arch = spec.arch ?? options.arch;
  return new Program(sources.source(spec.file), {
    name: spec.file,
    headers: sources.headers(),
    defines: spec.defines ?? {},
    std: 'c++17',
    cudaIncludes: false,
    minimal: true,
    ...(arch === undefined ? {} : { arch }),
    ...(options.deviceArch === undefined ? {} : { deviceArch: options.deviceArch }),
    ...(options.cache === undefined ? {} : { cache: options.cache }),
  });
}
