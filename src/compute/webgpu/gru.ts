/**
 * A GRU layer's recurrence on WebGPU: one dispatch of the fused step kernel per timestep
 * (`kernels/wgsl/gru-step.wgsl`: h·W_hhᵀ, biases, gates and update for every member, batch row
 * and unit; a workgroup per block of units and NB batch rows, the rows' h staged in workgroup
 * memory and each unit's columns split over a group of KS invocations), plus the layer-norm pass
 * when the layer has one (`gru-norm.wgsl`). All T steps are recorded into the open batch and go
 * to the device in one submit; the queue orders each step after the one it reads.
 */
import type { GruRecurrenceParams } from '../core/gru-params.js';
import type { TensorView } from '../core/view.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import { teamConfig } from './team.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

/** Columns per lane loaded at once by the step kernel. */
const MAX_KI = 16;

/**
 * Workgroups a step should have before a workgroup takes more batch rows: about two per SM of a
 * large GPU. More rows per workgroup read W_hh fewer times but lengthen each workgroup's chain of
 * work, and a step is bound by latency more than by bandwidth (an H200, 16 lanes per unit: b32
 * h256 T10 took 105, 77, 74 and 79 µs at 1, 2, 4 and 8 rows, 512 down to 64 workgroups; b64 h512
 * T20 432, 310 and 408 µs at 4, 8 and 16 rows).
 */
const TARGET_WORKGROUPS = 256;

/**
 * @internal The step kernel's shape (the benchmark sweeps it): invocations per workgroup, the
 * most lanes per unit, and the batch rows per workgroup (undefined: the most, up to 8, that keep
 * {@link TARGET_WORKGROUPS}); rows never exceed the lanes per unit, the batch rounded up to a
 * power of two, or what workgroup memory holds.
 */
export const gruTuning: { wg: number; ks: number; nb: number | undefined } = { wg: 256, ks: 16, nb: undefined };
const NORM_WG = 256;

/** Lanes per unit: up to a subgroup where shuffles may combine them, else through workgroup memory. */
function stepLanes(ctx: WebGpuOpContext): { ks: number; subgroups: boolean } {
  const sg = ctx.subgroupSize;
  if (sg === undefined) return { ks: gruTuning.ks, subgroups: false };
  return { ks: Math.min(gruTuning.ks, sg), subgroups: true };
}

/** The step kernel's blocking: lanes per unit, batch rows per workgroup, columns per lane and chunk, invocations per workgroup. */
interface StepShape {
  ks: number;
  subgroups: boolean;
  nb: number;
  ki: number;
  wg: number;
  workgroups: number;
}

function stepShape(ctx: WebGpuOpContext, p: GruRecurrenceParams): StepShape {
  const { ensemble: E, batch: B, hidden: H } = p;
  const { ks, subgroups } = stepLanes(ctx);
  const wg = gruTuning.wg;
  const ki = Math.min(MAX_KI, Math.ceil(H / ks));
  // Staged rows (NB·KS·KI words) and, without subgroups, the partial sums (WG·3·NB) must fit.
  const bytesPerRow = 4 * (ks * ki + (subgroups ? 0 : 3 * wg));
  const most = Math.min(gruTuning.nb ?? 8, ks, Math.floor(ctx.dev.limits.maxComputeWorkgroupStorageSize / bytesPerRow));
  const workgroups = (nb: number) => E * Math.ceil(B / nb) * Math.ceil(H / (wg / ks));
  let nb = 1;
  while (nb * 2 <= most && nb < B && (gruTuning.nb !== undefined || workgroups(nb * 2) >= TARGET_WORKGROUPS)) nb *= 2;
  return { ks, subgroups, nb, ki, wg, workgroups: workgroups(nb) };
}

const SEQ_PARAMS = [['s_e', 'u32'], ['s_b', 'u32'], ['s_t', 'u32'], ['slot', 'u32'], ['last', 'u32']] as const;

function stepSpec(p: GruRecurrenceParams, norm: boolean, shape: StepShape): KernelSpec {
  const dtype = p.hN.dtype;
  const bih = p.bIh !== undefined;
  const bhh = p.bHh !== undefined;
  const { ks, subgroups, nb, ki, wg } = shape;
  const roleTypes = [p.gx, p.wHh, p.bIh, p.bHh, p.h0, p.hSeq].map((v) => v?.dtype ?? '-').join(',');
  return cachedSpec(specs, `gru-step|${dtype}|${roleTypes}|${bih}|${bhh}|${norm}|${ks}|${ki}|${nb}|${wg}|${subgroups}`, () => ({
    op: 'gru',
    files: ['math.wgsl', 'gru-step.wgsl'],
    flags: { BIH: bih, BHH: bhh, NORM: norm, SUBGROUPS: subgroups },
    consts: { KS: ks, NB: nb, KI: ki, WG: wg },
    roles: [
      { name: 'gx', dtype: p.gx.dtype },
      { name: 'w', dtype: p.wHh.dtype },
      ...(bih ? [{ name: 'bih', dtype: p.bIh!.dtype }] : []),
      ...(bhh ? [{ name: 'bhh', dtype: p.bHh!.dtype }] : []),
      { name: 'h0', dtype: p.h0.dtype },
      { name: 'seq', dtype: p.hSeq.dtype, write: !norm },
      ...(norm ? [{ name: 'pre', dtype: 'f32' as const, write: true }] : [{ name: 'hn', dtype, write: true }]),
    ],
    params: [
      ['batch', 'u32'],
      ['hidden', 'u32'],
      ['gx_e', 'u32'],
      ['gx_b', 'u32'],
      ['gx_t', 'u32'],
      ['step', 'u32'],
      ['first', 'u32'],
      ['prev_slot', 'u32'],
      ['groups', 'u32'],
      ...SEQ_PARAMS,
    ],
    subgroups,
  }));
}

function normSpec(ctx: WebGpuOpContext, p: GruRecurrenceParams, team: number): KernelSpec {
  const ln = p.layerNorm!;
  const gamma = ln.gamma !== undefined;
  const beta = ln.beta !== undefined;
  const sub = teamConfig(ctx, team);
  return cachedSpec(specs, `gru-norm|${p.hN.dtype}|${gamma}|${beta}|${team}|${sub.subgroups ? sub.sg : 0}`, () => ({
    op: 'gru',
    files: ['team-reduce.wgsl', 'gru-norm.wgsl'],
    flags: { GAMMA: gamma, BETA: beta, SUBGROUPS: sub.subgroups },
    consts: { WG: NORM_WG, TEAM: team, SG: sub.sg },
    roles: [
      { name: 'pre', dtype: 'f32' },
      ...(gamma ? [{ name: 'gamma', dtype: ln.gamma!.dtype }] : []),
      ...(beta ? [{ name: 'beta', dtype: ln.beta!.dtype }] : []),
      { name: 'seq', dtype: p.hSeq.dtype, write: true },
      { name: 'hn', dtype: p.hN.dtype, write: true },
    ],
    params: [['rows', 'u32'], ['batch', 'u32'], ['hidden', 'u32'], ['eps', 'f32'], ...SEQ_PARAMS],
    subgroups: sub.subgroups,
  }));
}

export function webgpuGruRecurrence(ctx: WebGpuOpContext, p: GruRecurrenceParams): void {
  const { ensemble: E, batch: B, steps: T, hidden: H, slots } = p;
  const norm = p.layerNorm !== undefined;
  const shape = stepShape(ctx, p);
  const step = stepSpec(p, norm, shape);
  const stepGrid = groups1d(ctx, shape.workgroups * shape.wg, shape.wg);
  const scratch = norm ? ctx.scratch(E * B * H * 4) : undefined;
  try {
    const pre = scratch?.view('f32', [E * B * H]);
    const stepViews: TensorView[] = [
      p.gx,
      p.wHh,
      ...(p.bIh ? [p.bIh] : []),
      ...(p.bHh ? [p.bHh] : []),
      p.h0,
      p.hSeq,
      norm ? pre! : p.hN,
    ];
    const team = [8, 32, 64, NORM_WG].find((t) => H <= t * 16) ?? NORM_WG;
    const normViews: TensorView[] = norm
      ? [pre!, ...(p.layerNorm!.gamma ? [p.layerNorm!.gamma] : []), ...(p.layerNorm!.beta ? [p.layerNorm!.beta] : []), p.hSeq, p.hN]
      : [];
    const [sE, sB, sT] = p.seqStrides;
    const [gE, gB, gT] = p.gxStrides;
    for (let t = 0; t < T; t++) {
      const seq = [sE, sB, sT, t % slots, t === T - 1 ? 1 : 0];
      ctx.dispatcher.run(step, stepViews, [B, H, gE, gB, gT, t, t === 0 ? 1 : 0, (t + slots - 1) % slots, shape.workgroups, ...seq], stepGrid);
      if (norm) {
        ctx.dispatcher.run(normSpec(ctx, p, team), normViews, [E * B, B, H, p.layerNorm!.eps, ...seq], groups1d(ctx, E * B * team, NORM_WG));
      }
    }
  } finally {
    scratch?.release();
  }
}
