/**
 * Matmul on WebGPU: one tiled, register-blocked kernel (`kernels/wgsl/matmul.wgsl`) with the
 * whole epilogue fused (alpha, beta·C, bias, activation, rounding to the output dtype), batched
 * over grid z. The tile configuration comes from the autotuner's record for the problem class
 * (timed once per class and device on the real operands, kept in the shared autotune store), or
 * the heuristic for small products and where the device cannot be timed.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import type { TensorView } from '../core/view.js';
import { problemClassKey, type AutotuneRecord } from '../gpu/autotune.js';
import {
  configByName,
  configName,
  feasibleConfigs,
  heuristicConfig,
  MIN_TUNED_WORK,
  threadsOf,
  type MatmulConfig,
} from './matmul-configs.js';
import { cachedSpec, type WebGpuOpContext } from './op-context.js';
import { WebGpuCapabilityError } from './webgpu-errors.js';
import type { KernelSpec } from './wgsl.js';

/** Activation codes of `activation()` in math.wgsl. */
const ACTIVATION_CODES = { relu: 1, gelu: 2, geluTanh: 3, silu: 4, sigmoid: 5, tanh: 6 } as const;

/** Rounds of timing per candidate (the best counts: other work on a shared GPU only slows). */
const ROUNDS = 3;
/** Enough back-to-back products for about this much GPU time per round. */
const TARGET_MS = 2;
const MAX_REPS = 20;
/** Device time spent before the timed rounds, so the clocks are up (a GPU idling at low clocks takes a while). */
const WARM_MS = 30;

const specs = new Map<string, KernelSpec>();

/** Whether a dimension is a multiple of the tile (the kernel then skips bounds tests). */
function full(p: MatmulParams, c: MatmulConfig): boolean {
  return p.m % c.bm === 0 && p.n % c.bn === 0 && p.k % c.bk === 0;
}

function matmulSpec(p: MatmulParams, c: MatmulConfig): KernelSpec {
  const hasC = p.c !== undefined && p.beta !== 0;
  const hasBias = p.bias !== undefined;
  const act = p.activation ? ACTIVATION_CODES[p.activation] : 0;
  const checked = !full(p, c);
  const key = `matmul|${p.a.dtype}|${configName(c)}|${p.transA ? 't' : 'n'}${p.transB ? 't' : 'n'}|${checked ? 'chk' : 'full'}|${hasC}|${hasBias}|${act}`;
  return cachedSpec(specs, key, () => ({
    op: 'matmul',
    files: ['math.wgsl', 'matmul.wgsl'],
    flags: { TRANS_A: p.transA, TRANS_B: p.transB, CHECKED: checked, HAS_C: hasC, HAS_BIAS: hasBias, ACT: act !== 0, VEC4: c.tm % 4 === 0 && c.tn % 4 === 0, DB: c.db === true },
    consts: {
      BM: c.bm,
      BN: c.bn,
      BK: c.bk,
      TM: c.tm,
      TN: c.tn,
      THREADS: threadsOf(c),
      ACT: act,
    },
    roles: [
      { name: 'a', dtype: p.a.dtype },
      { name: 'b', dtype: p.b.dtype },
      ...(hasC ? [{ name: 'c', dtype: p.c!.dtype }] : []),
      ...(hasBias ? [{ name: 'bias', dtype: p.bias!.dtype }] : []),
      { name: 'out', dtype: p.out.dtype, write: true },
    ],
    params: [
      ['m', 'u32'],
      ['n', 'u32'],
      ['k', 'u32'],
      ['batch', 'u32'],
      ['a_stride', 'u32'],
      ['b_stride', 'u32'],
      ['c_stride', 'u32'],
      ['alpha', 'f32'],
      ['beta', 'f32'],
    ],
  }));
}

/** Records the product with tile configuration `c`. */
function record(ctx: WebGpuOpContext, p: MatmulParams, c: MatmulConfig): void {
  const spec = matmulSpec(p, c);
  const hasC = p.c !== undefined && p.beta !== 0;
  const views: TensorView[] = [p.a, p.b, ...(hasC ? [p.c!] : []), ...(p.bias ? [p.bias] : []), p.out];
  const values = [p.m, p.n, p.k, p.batch, p.aBatchStride, p.bBatchStride, p.cBatchStride, p.alpha, p.beta];
  const max = ctx.dispatcher.maxGroups;
  const groups = [Math.ceil(p.n / c.bn), Math.ceil(p.m / c.bm), Math.min(p.batch, max)] as const;
  if (groups[0] > max || groups[1] > max) {
    throw new WebGpuCapabilityError('matmul', 'maxComputeWorkgroupsPerDimension', `a ${p.m}x${p.n} output needs more than ${max} tiles of ${c.bm}x${c.bn} along one side`);
  }
  ctx.dispatcher.run(spec, views, values, groups);
}

/** Runs `params` (validated by the front-end; never an empty output). */
export function webgpuMatmul(ctx: WebGpuOpContext, params: MatmulParams): void {
  record(ctx, params, chooseConfig(ctx, params));
}

/**
 * Runs `params` with the configuration named `name`, bypassing the choice (tests, benchmarks).
 * @throws InvalidArgumentError for a name that is no configuration this device can run.
 */
export function webgpuMatmulWithConfig(ctx: WebGpuOpContext, params: MatmulParams, name: string): void {
  const config = configByName(name);
  if (!config || !configsOf(ctx).includes(config)) {
    throw new InvalidArgumentError(`matmul: ${name} is not a configuration this device runs (${configsOf(ctx).map(configName).join(', ')})`);
  }
  record(ctx, params, config);
}

function configsOf(ctx: WebGpuOpContext): MatmulConfig[] {
  const limits = ctx.dev.limits;
  return feasibleConfigs(limits.maxComputeWorkgroupStorageSize, limits.maxComputeInvocationsPerWorkgroup);
}

function chooseConfig(ctx: WebGpuOpContext, p: MatmulParams): MatmulConfig {
  const configs = configsOf(ctx);
  const fallback = heuristicConfig(configs, p.m, p.n, p.batch);
  if (!p.autotune || ctx.timer === undefined || p.m * p.n * p.k * p.batch < MIN_TUNED_WORK) return fallback;
  const key = problemClassKey({
    device: ctx.deviceKey,
    dtype: p.a.dtype,
    precision: 'highest',
    transA: p.transA,
    transB: p.transB,
    m: p.m,
    n: p.n,
    k: p.k,
    batch: p.batch,
    alignA: true,
    alignB: true,
    vecC: false,
  });
  const known = ctx.autotune.get(key);
  const chosen = known ? configByName(known.kernel) : undefined;
  if (chosen && configs.includes(chosen)) return chosen;
  // A software adapter (lavapipe, SwiftShader) tunes over the plain configurations only: each
  // build costs it seconds, and the tuned-only tiles are for real GPUs' register files.
  const candidates = ctx.dev.adapterInfo.fallback ? configs.filter((c) => !c.tunedOnly) : configs;
  return tune(ctx, p, candidates, key) ?? fallback;
}

/**
 * Times every configuration on the real operands (each run overwrites `out`; the chosen one runs
 * after) and keeps the fastest for the class. Every candidate is built and run once first (one
 * Dawn refuses is skipped), the device is kept busy for {@link WARM_MS} so its clocks are up, and
 * then each round times every candidate in turn, so a change of clock mid-way touches them all
 * alike; a candidate's time is its best round.
 */
function tune(ctx: WebGpuOpContext, p: MatmulParams, configs: readonly MatmulConfig[], key: string): MatmulConfig | undefined {
  const timer = ctx.timer!;
  const live: { config: MatmulConfig; reps: number; ms: number }[] = [];
  for (const config of configs) {
    try {
      const once = timer.time('matmul autotune', () => record(ctx, p, config));
      live.push({ config, reps: Math.max(1, Math.min(MAX_REPS, Math.ceil(TARGET_MS / Math.max(once, 1e-3)))), ms: Infinity });
    } catch (err) {
      ctx.logger?.debug(`matmul autotune: ${configName(config)} skipped: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (live.length === 0) return undefined;
  let warm = 0;
  while (warm < WARM_MS) {
    const ms = timer.time('matmul autotune', () => {
      for (let r = 0; r < live[0]!.reps; r++) record(ctx, p, live[0]!.config);
    });
    warm += Math.max(ms, 0.05);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of live) {
      const ms = timer.time('matmul autotune', () => {
        for (let r = 0; r < c.reps; r++) record(ctx, p, c.config);
      }) / c.reps;
      c.ms = Math.min(c.ms, ms);
    }
  }
  const times: Record<string, number> = {};
  let best: { config: MatmulConfig; ms: number } | undefined;
  for (const c of live) {
    times[configName(c.config)] = c.ms;
    if (!best || c.ms < best.ms) best = { config: c.config, ms: c.ms };
  }
  if (!best) return undefined;
  const entry: AutotuneRecord = {
    choice: configName(best.config),
    kernel: configName(best.config),
    kernelMs: best.ms,
    candidates: times,
    measuredAt: new Date().toISOString(),
  };
  ctx.autotune.set(key, entry);
  ctx.logger?.debug(`matmul autotune ${key}: ${JSON.stringify(times)} → ${entry.choice}`);
  return best.config;
}
