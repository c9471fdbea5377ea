/**
 * The C headers the tables are generated from: where they are and which
 * package provides them, so a missing one can be named with its remedy.
 */
import { join } from 'node:path';

export type HeaderId = 'cuda' | 'hipRuntimeApi' | 'hipDriverTypes' | 'hiprtc' | 'hipVersion';

export interface HeaderLocation {
  /** The name the tables cite, e.g. `cuda.h`, `hip/hiprtc.h`. */
  readonly name: string;
  readonly path: string;
  /** Where the header comes from, for the message when it is missing. */
  readonly providedBy: string;
}

const HIP_PACKAGE = "Debian's libamdhip64-dev 5.2.3 (apt-get install libamdhip64-dev)";

/**
 * cuda.h of the toolkit at `$CUDA_HOME` (default `/usr/local/cuda`) and the HIP
 * headers where Debian's libamdhip64-dev puts them.
 */
export function headerLocations(cudaHome = process.env.CUDA_HOME || '/usr/local/cuda'): Record<HeaderId, HeaderLocation> {
  const hip = (file: string): HeaderLocation => ({ name: `hip/${file}`, path: join('/usr/include/hip', file), providedBy: HIP_PACKAGE });
  return {
    cuda: {
      name: 'cuda.h',
      path: join(cudaHome, 'include', 'cuda.h'),
      providedBy:
        "the CUDA 13.0 toolkit (NVIDIA's apt package cuda-driver-dev-13-0 or the pip wheel nvidia-cuda-runtime 13.0; " +
        'set CUDA_HOME to a toolkit elsewhere)',
    },
    hipRuntimeApi: hip('hip_runtime_api.h'),
    hipDriverTypes: hip('driver_types.h'),
    hiprtc: hip('hiprtc.h'),
    hipVersion: hip('hip_version.h'),
  };
}
