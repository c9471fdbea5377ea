/**
 * Softmax, logSoftmax and layerNorm over the rows of [rows, cols] on WebGPU: a team of
 * invocations per row, sized to the row, holding up to {@link MAX_CACHED} elements each in
 * registers (longer rows are read twice), combined with one team reduction per statistic
 * (subgroup shuffles where the device allows them, see `team.ts`).
 */
import type { TensorView } from '../core/view.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import { teamConfig } from './team.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();
const WG = 256;
/** Most elements an invocation keeps in registers. */
const MAX_CACHED = 16;
const TEAMS = [8, 32, 64, WG];

/** The team of a row of `cols` and the elements each member keeps (0: the row is read twice). */
export function rowLaunch(cols: number): { team: number; cached: number } {
  for (const team of TEAMS) if (cols <= team * MAX_CACHED) return { team, cached: Math.ceil(cols / team) };
  return { team: WG, cached: 0 };
}

function rowConsts(ctx: WebGpuOpContext, cols: number) {
  const { team, cached } = rowLaunch(cols);
  const sub = teamConfig(ctx, team);
  return { team, cached, sub, key: `${team}|${cached}|${sub.subgroups ? sub.sg : 0}` };
}

export function softmax(ctx: WebGpuOpContext, x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
  const { team, cached, sub, key } = rowConsts(ctx, cols);
  const spec = cachedSpec(specs, `softmax|${x.dtype}|${log}|${key}`, () => ({
    op: log ? 'logSoftmax' : 'softmax',
    files: ['math.wgsl', 'team-reduce.wgsl', 'softmax.wgsl'],
    flags: { CACHED: cached > 0, LOG: log, SUBGROUPS: sub.subgroups },
    consts: { WG, TEAM: team, K: Math.max(cached, 1), SG: sub.sg },
    roles: [
      { name: 'x', dtype: x.dtype },
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['rows', 'u32'], ['cols', 'u32']],
    subgroups: sub.subgroups,
  }));
  ctx.dispatcher.run(spec, [x, out], [rows, cols], groups1d(ctx, rows * team, WG));
}

export function layerNorm(
  ctx: WebGpuOpContext,
  x: TensorView,
  gamma: TensorView | undefined,
  beta: TensorView | undefined,
  out: TensorView,
  rows: number,
  cols: number,
  eps: number,
): void {
  const { team, cached, sub, key } = rowConsts(ctx, cols);
  const spec = cachedSpec(specs, `layernorm|${x.dtype}|${gamma !== undefined}|${beta !== undefined}|${key}`, () => ({
    op: 'layerNorm',
    files: ['team-reduce.wgsl', 'layernorm.wgsl'],
    flags: { CACHED: cached > 0, GAMMA: gamma !== undefined, BETA: beta !== undefined, SUBGROUPS: sub.subgroups },
    consts: { WG, TEAM: team, K: Math.max(cached, 1), SG: sub.sg },
    roles: [
      { name: 'x', dtype: x.dtype },
      ...(gamma ? [{ name: 'gamma', dtype: gamma.dtype }] : []),
      ...(beta ? [{ name: 'beta', dtype: beta.dtype }] : []),
      { name: 'out', dtype: out.dtype, write: true },
    ],
    params: [['rows', 'u32'], ['cols', 'u32'], ['eps', 'f32']],
    subgroups: sub.subgroups,
  }));
  const views = [x, ...(gamma ? [gamma] : []), ...(beta ? [beta] : []), out];
  ctx.dispatcher.run(spec, views, [rows, cols, eps], groups1d(ctx, rows * team, WG));
}
