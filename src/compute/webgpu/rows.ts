/**
 * Softmax, logSoftmax and layerNorm over the rows of [rows, cols] on WebGPU
 * (`kernels/wgsl/softmax.wgsl`, `layernorm.wgsl`, `rows-io.wgsl`): a team of invocations per
 * row, sized so each holds about {@link rowTuning}.elements elements in registers (16-byte loads
 * where the row and the views allow), so every element is read once and written once; the
 * statistics come from team reductions (subgroup shuffles where the device allows them, see
 * `team.ts`). Rows longer than the largest team holds, and long rows too few to fill the
 * device, are split into chunks over several workgroups: a statistics pass writes one record per
 * chunk, an apply pass combines a row's records and writes the row (one more read of the input).
 */
import type { TensorView } from '../core/view.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import { teamConfig, teamWorkgroupLimit } from './team.js';
import { WebGpuCapabilityError } from './webgpu-errors.js';
import type { WebGpuBuffer } from './webgpu-memory.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();

/**
 * @internal How rows are laid out (the benchmark sweeps these): elements an invocation aims to
 * hold, the most it may hold, the smallest workgroup, the workgroup of a split chunk and the
 * elements each of its invocations holds, and the fewest workgroups below which long rows split.
 */
export const rowTuning = {
  /** Elements per invocation for layerNorm, and for softmax (whose exponentials give each element more to do). */
  elements: 16,
  softmaxElements: 32,
  /** softmax's e^ by the hardware's exp2 (else the polynomial exp_fast). */
  hwExp: true,
  maxElements: 32,
  minWorkgroup: 256,
  splitWorkgroup: 256,
  splitElements: 16,
  splitBelow: 256,
  /** Where splitting pays for the second read: rows of at least this many elements. */
  splitMinCols: 8192,
};

/** How one row op runs: invocations per workgroup and per row (or chunk), vec4 units each, and the chunks of a split row. */
export interface RowPlan {
  readonly wg: number;
  readonly team: number;
  /** Units of 4 elements per invocation. */
  readonly k: number;
  /** Elements per chunk and chunks per row when split; undefined for one team per row. */
  readonly chunk?: number;
  readonly chunks?: number;
}

const nextPow2 = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(1, n)));

/** The plan for `rows` rows of `cols` on a device whose workgroups may have `maxWg` invocations (`tuning.elements` per invocation). */
export function rowPlan(rows: number, cols: number, maxWg: number, tuning: Omit<typeof rowTuning, 'softmaxElements' | 'hwExp'> = rowTuning): RowPlan {
  const units = Math.ceil(cols / 4);
  const maxUnits = Math.max(1, Math.floor(tuning.maxElements / 4));
  const team = Math.min(maxWg, nextPow2(Math.ceil(units / Math.max(1, Math.floor(tuning.elements / 4)))));
  const k = Math.ceil(units / team);
  const wg = Math.min(maxWg, Math.max(team, tuning.minWorkgroup));
  const groups = Math.ceil(rows / (wg / team));
  const splitWg = Math.min(maxWg, tuning.splitWorkgroup);
  const chunk = splitWg * 4 * Math.max(1, Math.floor(tuning.splitElements / 4));
  const tooLong = k > maxUnits;
  const tooFew = groups < tuning.splitBelow && cols >= Math.max(tuning.splitMinCols, 2 * chunk);
  if (!tooLong && !tooFew) return { wg, team, k };
  return { wg: splitWg, team: splitWg, k: chunk / (4 * splitWg), chunk, chunks: Math.ceil(cols / chunk) };
}

/** Whether every view starts on a 16-byte boundary (its element offset in the segment is a multiple of 4). */
function aligned(views: readonly TensorView[]): boolean {
  return views.every((v) => v.dtype === 'f32' && ((v.buffer as WebGpuBuffer).byteOffset / 4 + v.offset) % 4 === 0);
}

type RowOp = 'softmax' | 'logSoftmax' | 'layerNorm';
type Phase = 'single' | 'stats' | 'apply';

interface RowKernel {
  readonly op: RowOp;
  readonly phase: Phase;
  readonly plan: RowPlan;
  readonly vec4: boolean;
  readonly sub: { subgroups: boolean; sg: number };
  readonly roles: KernelSpec['roles'];
  readonly gamma: boolean;
  readonly beta: boolean;
}

function rowSpec(k: RowKernel): KernelSpec {
  const { op, phase, plan, vec4, sub } = k;
  const softmax = op !== 'layerNorm';
  const hwExp = softmax && rowTuning.hwExp;
  const key = `rows|${op}|${hwExp}|${phase}|${k.roles.map((r) => r.dtype).join(',')}|${k.gamma}|${k.beta}|${plan.wg}|${plan.team}|${plan.k}|${plan.chunk ?? 0}|${vec4}|${sub.subgroups ? sub.sg : 0}`;
  return cachedSpec(specs, key, () => ({
    op,
    files: [...(softmax ? ['math.wgsl'] : []), 'rows-io.wgsl', 'team-reduce.wgsl', softmax ? 'softmax.wgsl' : 'layernorm.wgsl'],
    flags: {
      VEC4: vec4,
      SPLIT: phase !== 'single',
      STATS: phase === 'stats',
      APPLY: phase === 'apply',
      LOG: op === 'logSoftmax',
      GAMMA: k.gamma,
      BETA: k.beta,
      SUBGROUPS: sub.subgroups,
      HW_EXP: hwExp,
    },
    consts: { WG: plan.wg, TEAM: plan.team, K: plan.k, SG: sub.sg, CHUNK: plan.chunk ?? 0 },
    roles: k.roles,
    params: softmax ? [['rows', 'u32'], ['cols', 'u32']] : [['rows', 'u32'], ['cols', 'u32'], ['eps', 'f32']],
    subgroups: sub.subgroups,
    vec4,
  }));
}

/** Records a row op: one dispatch, or the two passes of a split plan. */
function runRows(
  ctx: WebGpuOpContext,
  op: RowOp,
  x: TensorView,
  out: TensorView,
  extra: { gamma?: TensorView; beta?: TensorView; eps?: number },
  rows: number,
  cols: number,
  plan: RowPlan = rowPlan(rows, cols, teamWorkgroupLimit(ctx.dev), op === 'layerNorm' ? rowTuning : { ...rowTuning, elements: rowTuning.softmaxElements }),
): void {
  const inputs = [x, ...(extra.gamma ? [extra.gamma] : []), ...(extra.beta ? [extra.beta] : [])];
  const vec4 = cols % 4 === 0 && aligned([...inputs, out]);
  const sub = teamConfig(ctx, plan.team);
  const inputRoles = [
    { name: 'x', dtype: x.dtype },
    ...(extra.gamma ? [{ name: 'gamma', dtype: extra.gamma.dtype }] : []),
    ...(extra.beta ? [{ name: 'beta', dtype: extra.beta.dtype }] : []),
  ];
  const values = op === 'layerNorm' ? [rows, cols, extra.eps!] : [rows, cols];
  const base = { op, plan, vec4, sub, gamma: extra.gamma !== undefined, beta: extra.beta !== undefined };
  if (plan.chunks === undefined) {
    const spec = rowSpec({ ...base, phase: 'single', roles: [...inputRoles, { name: 'out', dtype: out.dtype, write: true }] });
    ctx.dispatcher.run(spec, [...inputs, out], values, groups1d(ctx, Math.ceil(rows / (plan.wg / plan.team)) * plan.wg, plan.wg));
    return;
  }
  const max = ctx.dispatcher.maxGroups;
  if (plan.chunks > max) {
    throw new WebGpuCapabilityError(op, 'maxComputeWorkgroupsPerDimension', `a row of ${cols} elements needs ${plan.chunks} chunks of ${plan.chunk}, more than ${max} workgroups along one side`);
  }
  const grid = [plan.chunks, Math.min(rows, max), Math.ceil(rows / max)] as const;
  const scratch = ctx.scratch(rows * plan.chunks * 16);
  try {
    const part = scratch.view('f32', [rows * plan.chunks * 4]);
    const stats = rowSpec({ ...base, phase: 'stats', gamma: false, beta: false, roles: [{ name: 'x', dtype: x.dtype }, { name: 'part', dtype: 'f32', write: true }] });
    ctx.dispatcher.run(stats, [x, part], values, grid);
    const apply = rowSpec({ ...base, phase: 'apply', roles: [...inputRoles, { name: 'part', dtype: 'f32' }, { name: 'out', dtype: out.dtype, write: true }] });
    ctx.dispatcher.run(apply, [...inputs, part, out], values, grid);
  } finally {
    scratch.release();
  }
}

export function softmax(ctx: WebGpuOpContext, x: TensorView, out: TensorView, rows: number, cols: number, log: boolean, plan?: RowPlan): void {
  runRows(ctx, log ? 'logSoftmax' : 'softmax', x, out, {}, rows, cols, plan);
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
  plan?: RowPlan,
): void {
  runRows(ctx, 'layerNorm', x, out, { ...(gamma ? { gamma } : {}), ...(beta ? { beta } : {}), eps }, rows, cols, plan);
}
