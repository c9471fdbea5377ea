/**
 * Which `kernels/` sources are portable (they compile under NVRTC and hiprtc,
 * take the warp width from GC_WARP_SIZE, and use only what `portable.cuh`
 * wraps) and which are CUDA-only, with why. This is the one place that says
 * so: the HIP backend compiles only portable sources, and a source not
 * listed here counts as CUDA-only.
 */

/** Sources that build for both CUDA and HIP. */
const PORTABLE: ReadonlySet<string> = new Set([
  'unary.cu',
  'activation_grad.cu',
  'binary.cu',
  'fill.cu',
  'cast.cu',
  'random.cu',
  'reduce.cu',
  'softmax.cu',
  'layernorm.cu',
  'transpose.cu',
  'one_hot.cu',
  'optimizer.cu',
]);

/** CUDA-only sources and the NVIDIA-only feature each relies on. */
const CUDA_ONLY: Readonly<Record<string, string>> = {
  'matmul_tc.cu': 'tensor-core mma.sync and ldmatrix (inline PTX)',
  'matmul_wgmma.cu': 'Hopper wgmma and TMA (sm_90a PTX)',
  'matmul_epilogue.cu': 'serves the CUDA matmul paths only',
  'matmul_f32.cu': 'inline PTX loads and a 32-wide warp tiling',
  'attention_mma.cu': 'tensor-core mma.sync and cp.async (inline PTX)',
  'attention_mma_pingpong.cu': 'tensor-core mma.sync, cp.async and named barriers (inline PTX)',
  'attention_wgmma.cu': 'Hopper wgmma and TMA (sm_90a PTX)',
  'attention_simt.cu': 'cp.async (inline PTX) and 32-wide warp tiling',
  'attention_decode.cu': '32-wide warps (a lane per key, *_sync shuffles)',
  'attention_decode_mma.cu': 'tensor-core mma.sync and cp.async (inline PTX)',
  'softmax_cluster.cu': 'thread-block clusters and distributed shared memory (sm_90 PTX)',
  'small_rsvd_cluster.cu': 'thread-block clusters and distributed shared memory (sm_90 PTX)',
  'gru.cu': 'a persistent cooperative kernel tuned to 32-wide warps',
};

/** Whether a `kernels/` source compiles for HIP as well as CUDA. */
export function isPortableKernel(file: string): boolean {
  return PORTABLE.has(file);
}

/** Why a source is CUDA-only; undefined for portable ones. */
export function cudaOnlyReason(file: string): string | undefined {
  if (PORTABLE.has(file)) return undefined;
  return CUDA_ONLY[file] ?? 'not marked portable in src/compute/gpu/kernel-portability.ts';
}

/** The portable sources, sorted. */
export function portableKernels(): string[] {
  return [...PORTABLE].sort();
}
