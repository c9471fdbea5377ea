/**
 * A GRU layer's recurrence on WebGPU: one dispatch of the fused step kernel per timestep
 * (`kernels/wgsl/gru-step.wgsl`: h·W_hhᵀ, biases, gates and update for every member, batch row
 * and unit; a group of KS invocations per unit and NB (2) batch rows, splitting the columns, with
 * every load of a chunk in flight at once), plus the layer-norm pass when the layer has one
 * (`gru-norm.wgsl`). All T steps are recorded into the open batch and go to the device in one
 * submit; the queue orders each step after the one it reads.
 */
import type { GruRecurrenceParams } from '../core/gru-params.js';
import type { TensorView } from '../core/view.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import { teamConfig } from './team.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

/** Invocations per workgroup of the step kernel, columns per lane loaded at once. */
const STEP_WG = 256;
const MAX_KI = 8;

/** @internal Batch rows per group of the step kernel (the benchmark sweeps it). */
export const gruTuning = { nb: 2 };
const NORM_WG = 256;

/** Lanes per unit: a subgroup of up to 32 where shuffles may combine them, else 32 through workgroup memory. */
function stepLanes(ctx: WebGpuOpContext): { ks: number; subgroups: boolean } {
  const sg = ctx.subgroupSize;
  if (sg === undefined) return { ks: 32, subgroups: false };
  return { ks: Math.min(32, sg), subgroups: true };
}

const SEQ_PARAMS = [['s_e', 'u32'], ['s_b', 'u32'], ['s_t', 'u32'], ['slot', 'u32'], ['last', 'u32']] as const;

function stepSpec(ctx: WebGpuOpContext, p: GruRecurrenceParams, norm: boolean): KernelSpec {
  const dtype = p.hN.dtype;
  const bih = p.bIh !== undefined;
  const bhh = p.bHh !== undefined;
  const { ks, subgroups } = stepLanes(ctx);
  const ki = Math.min(MAX_KI, Math.ceil(p.hidden / ks));
  const NB = gruTuning.nb;
  const roleTypes = [p.gx, p.wHh, p.bIh, p.bHh, p.h0, p.hSeq].map((v) => v?.dtype ?? '-').join(',');
  return cachedSpec(specs, `gru-step|${dtype}|${roleTypes}|${bih}|${bhh}|${norm}|${ks}|${ki}|${NB}|${subgroups}`, () => ({
    op: 'gru',
    files: ['math.wgsl', 'gru-step.wgsl'],
    flags: { BIH: bih, BHH: bhh, NORM: norm, SUBGROUPS: subgroups },
    consts: { KS: ks, NB, KI: ki, WG: STEP_WG },
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
  const step = stepSpec(ctx, p, norm);
  const { ks } = stepLanes(ctx);
  const groups = E * Math.ceil(B / gruTuning.nb) * H;
  const stepGrid = groups1d(ctx, Math.ceil(groups / (STEP_WG / ks)) * STEP_WG, STEP_WG);
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
      ctx.dispatcher.run(step, stepViews, [B, H, gE, gB, gT, t, t === 0 ? 1 : 0, (t + slots - 1) % slots, groups, ...seq], stepGrid);
      if (norm) {
        ctx.dispatcher.run(normSpec(ctx, p, team), normViews, [E * B, B, H, p.layerNorm!.eps, ...seq], groups1d(ctx, E * B * team, NORM_WG));
      }
    }
  } finally {
    scratch?.release();
  }
}
