/**
 * A matmul resolved for the CUDA device: operand addresses and alignment, the kernel families the
 * device and operands allow (most preferred first), and the kernel variant of a tile configuration.
 */
import type { Kernel } from '../../../driver/kernel.js';
import { GpuError } from '../../../errors.js';
import { dtypeSize } from '../../core/dtype.js';
import type { MatmulParams } from '../../core/matmul-plan.js';
import type { CudaContext } from '../cuda-context.js';
import {
  ACTIVATION_CODES,
  candidateConfigs,
  configName,
  epilogueVectorOk,
  operandAligned,
  wgmmaEnabled,
  type MatmulConfig,
  type MatmulFamily,
  type MatmulVariant,
} from './matmul-kernels.js';

/** Besides the wgmma tiles, the Hopper autotuner also tries these mma.sync tiles (they win on small products). */
const HOPPER_MMA_CANDIDATES = 2;

/** What one product needs resolved before it runs. */
export interface Resolved {
  readonly params: MatmulParams;
  readonly dtype: 'f32' | 'f16' | 'bf16';
  /** Families to consider, most preferred first. */
  readonly families: readonly MatmulFamily[];
  readonly a: bigint;
  readonly b: bigint;
  readonly out: bigint;
  readonly c: bigint;
  readonly bias: bigint;
  readonly act: number;
  readonly alignA: boolean;
  readonly alignB: boolean;
  /** The SIMT epilogue may use 16-byte accesses. */
  readonly vecC: boolean;
}

/**
 * Addresses, alignment and candidate families of a product. `withFallback` adds the SIMT
 * family everywhere (tests reach the pre-sm_80 kernel with it).
 */
export function resolve(backend: CudaContext, params: MatmulParams, withFallback = false): Resolved {
  const dtype = params.out.dtype;
  if (dtype === 'i32') throw new GpuError('UNSUPPORTED', 'matmul has no i32 kernel');
  const { major, minor } = backend.device.computeCapability;
  const elem = dtypeSize[dtype];
  const a = backend.address(params.a);
  const b = backend.address(params.b);
  const out = backend.address(params.out);
  const c = params.c ? backend.address(params.c) : 0n;
  const bias = params.bias ? backend.address(params.bias) : 0n;
  const alignA = operandAligned(a, params.transA ? params.m : params.k, elem) && (params.aBatchStride * elem) % 16 === 0;
  const alignB = operandAligned(b, params.transB ? params.k : params.n, elem) && (params.bBatchStride * elem) % 16 === 0;
  // f32 uses tensor cores only when TF32 is allowed.
  const tensorCores = dtype !== 'f32' || params.precision === 'tf32';
  const allowed = familiesOf(major, minor, tensorCores, tensorCores && wgmmaEligible(params, dtype, alignA, alignB));
  const families = withFallback && !allowed.includes('simt') ? [...allowed, 'simt' as const] : allowed;
  return {
    params,
    dtype,
    families,
    a,
    b,
    out,
    c,
    bias,
    act: ACTIVATION_CODES[params.activation ?? 'none'],
    alignA,
    alignB,
    // An absent c or bias is address 0, which is aligned.
    vecC: dtype === 'f32' && epilogueVectorOk(params.n, [out, c, bias]),
  };
}

/**
 * {@link matmulFamilies}, one shared frozen array per answer: products resolve on every call, and
 * the answer only changes with the device, tensor cores, the operands' TMA fitness and the
 * `GPUCOMPUTE_MATMUL_WGMMA` switch (read only where wgmma could apply).
 */
function familiesOf(major: number, minor: number, tensorCores: boolean, wgmmaOperands: boolean): readonly MatmulFamily[] {
  const key = (major * 100 + minor) * 8 + (tensorCores ? 4 : 0) + (wgmmaOperands ? 2 : 0) + (wgmmaOperands && wgmmaEnabled() ? 1 : 0);
  let families = familyLists.get(key);
  if (families === undefined) {
    families = Object.freeze(matmulFamilies(major, minor, tensorCores, wgmmaOperands));
    familyLists.set(key, families);
  }
  return families;
}

const familyLists = new Map<number, readonly MatmulFamily[]>();

/**
 * The kernel families a product may use on a device of compute capability `major.minor`, most
 * preferred first: wgmma on sm_90 (unless `GPUCOMPUTE_MATMUL_WGMMA=0`) when the operands suit TMA,
 * mma.sync from sm_80, both only with `tensorCores` (16-bit, or tf32 allowed); SIMT otherwise.
 */
export function matmulFamilies(major: number, minor: number, tensorCores: boolean, wgmmaOperands: boolean): MatmulFamily[] {
  const families: MatmulFamily[] = [];
  if (tensorCores && major === 9 && minor === 0 && wgmmaEnabled() && wgmmaOperands) families.push('wgmma');
  if (tensorCores && major >= 8) families.push('mma');
  if (families.length === 0) families.push('simt');
  return families;
}

/**
 * TMA reads 16-byte-aligned rows. 16-bit operands go as they are (wgmma transposes M/N-major
 * ones); tf32 wgmma reads K-major operands only, so others are transposed first into
 * k-contiguous copies, whose rows are k·4 bytes.
 */
function wgmmaEligible(p: MatmulParams, dtype: 'f32' | 'f16' | 'bf16', alignA: boolean, alignB: boolean): boolean {
  if (dtype !== 'f32') return alignA && alignB;
  const kRows = p.k % 4 === 0;
  return kRows && (p.transA ? true : alignA) && (p.transB ? alignB : true);
}

export function configByName(r: Resolved, name: string): MatmulConfig | undefined {
  for (const family of r.families) {
    const key = `${family}|${r.dtype}`;
    let byName = configsByName.get(key);
    if (byName === undefined) {
      byName = new Map(candidateConfigs(family, r.dtype).map((c) => [configName(c), c]));
      configsByName.set(key, byName);
    }
    const config = byName.get(name);
    if (config) return config;
  }
  return undefined;
}

/** The candidate configurations of each family and dtype by name (looked up on every tuned launch). */
const configsByName = new Map<string, Map<string, MatmulConfig>>();

export function variantFor(r: Resolved, config: MatmulConfig): MatmulVariant {
  const p = r.params;
  return matmulVariant(config, { dtype: r.dtype, transA: p.transA, transB: p.transB, alignA: r.alignA, alignB: r.alignB, vecC: r.vecC });
}

/** The kernel variant of a configuration for a product of these traits (the module it compiles). */
export function matmulVariant(config: MatmulConfig, product: Omit<MatmulVariant, 'config'>): MatmulVariant {
  // tf32 wgmma runs on K-major copies (see runWgmma).
  const kMajorCopies = config.family === 'wgmma' && product.dtype === 'f32';
  return {
    config,
    dtype: product.dtype,
    transA: kMajorCopies ? false : product.transA,
    transB: kMajorCopies ? true : product.transB,
    alignA: kMajorCopies || product.alignA,
    alignB: kMajorCopies || product.alignB,
    vecC: config.family === 'simt' && product.vecC,
  };
}

/** Candidates the autotuner times: every configuration of the families, few mma ones beside wgmma. */
export function tuningCandidates(r: Pick<Resolved, 'families' | 'dtype'>): MatmulConfig[] {
  return r.families.flatMap((family) => {
    const all = candidateConfigs(family, r.dtype);
    return family === 'mma' && r.families.includes('wgmma') ? all.slice(-HOPPER_MMA_CANDIDATES) : [...all];
  });
}

/** Raises a kernel's dynamic shared memory limit to `bytes` where it is below. */
export function raiseSharedLimit(kernel: Kernel, bytes: number): void {
  if (bytes > kernel.attributes.maxDynamicSharedSizeBytes) kernel.setMaxDynamicSharedMemory(bytes);
}
