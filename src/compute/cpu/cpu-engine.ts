/** Which engines run the CPU backend's ops, as its info, probe and log report them. */
import type { BlasVendor } from '../../blas/vendor.js';
import type { SimdVariant } from './simd/wasm-module.js';

/** What computes on the CPU backend. */
export interface CpuEngine {
  /** What runs the f32 products: the BLAS found (its vendor), or `'wasm'`, the WebAssembly sgemm. */
  products: BlasVendor | 'wasm';
  /** The build of the WebAssembly kernels, which run every other op (and 16-bit products). */
  simd: SimdVariant;
  /** Threads that share big ops, the calling one included (1: no workers). */
  threads: number;
}

const SIMD_NAMES: Record<SimdVariant, string> = { 'relaxed-simd': 'WebAssembly relaxed SIMD', simd128: 'WebAssembly SIMD128' };

/** e.g. `openblas products, WebAssembly relaxed SIMD, 2 threads`. */
export function describeEngine(engine: CpuEngine): string {
  const products = engine.products === 'wasm' ? '' : `${engine.products} products, `;
  return `${products}${SIMD_NAMES[engine.simd]}, ${engine.threads} thread${engine.threads === 1 ? '' : 's'}`;
}
