/**
 * A GRU layer's recurrence on WebGPU: one dispatch of the fused step kernel per timestep
 * (`kernels/wgsl/gru-step.wgsl`: h·W_hhᵀ, biases, gates and update for every member, batch row
 * and unit), plus the layer-norm pass when the layer has one (`gru-norm.wgsl`). All T steps are
 * recorded into the open batch; the queue orders each step after the one it reads.
 */
import type { GruRecurrenceParams } from '../core/gru-params.js';
import type { TensorView } from '../core/view.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import { teamConfig } from './team.js';
import { WebGpuCapabilityError } from './webgpu-errors.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

/** Batch rows and units per workgroup of the step kernel, and the chunk of h staged at a time. */
const BB = 8;
const BJ = 32;
const KC = 32;
const NORM_WG = 256;

const SEQ_PARAMS = [['s_e', 'u32'], ['s_b', 'u32'], ['s_t', 'u32'], ['slot', 'u32'], ['last', 'u32']] as const;

function stepSpec(p: GruRecurrenceParams, norm: boolean): KernelSpec {
  const dtype = p.hN.dtype;
  const bih = p.bIh !== undefined;
  const bhh = p.bHh !== undefined;
  return cachedSpec(specs, `gru-step|${dtype}|${bih}|${bhh}|${norm}`, () => ({
    op: 'gru',
    files: ['math.wgsl', 'gru-step.wgsl'],
    flags: { BIH: bih, BHH: bhh, NORM: norm },
    consts: { BB, BJ, KC },
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
      ...SEQ_PARAMS,
    ],
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
  const max = ctx.dispatcher.maxGroups;
  if (E > max || Math.ceil(B / BB) > max) {
    throw new WebGpuCapabilityError('gru', 'maxComputeWorkgroupsPerDimension', `${E} members x ${Math.ceil(B / BB)} row blocks need more than ${max} workgroups along one side`);
  }
  const step = stepSpec(p, norm);
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
      ctx.dispatcher.run(step, stepViews, [B, H, gE, gB, gT, t, t === 0 ? 1 : 0, (t + slots - 1) % slots, ...seq], [Math.ceil(H / BJ), Math.ceil(B / BB), E]);
      if (norm) {
        ctx.dispatcher.run(normSpec(ctx, p, team), normViews, [E * B, B, H, p.layerNorm!.eps, ...seq], groups1d(ctx, E * B * team, NORM_WG));
      }
    }
  } finally {
    scratch?.release();
  }
}
