/**
 * Reductions on WebGPU along one axis of [outer, len, inner] (or everything): a team of
 * invocations per row for a contiguous axis (sized to the row), an invocation per output for a
 * strided one, and for few long rows (or few outputs over a long axis) per-chunk partials plus
 * a finishing pass that combines them in a fixed order. Deterministic.
 */
import type { DType } from '../core/dtype.js';
import type { ReduceOp, ReducePlan } from '../core/reduce-plan.js';
import type { TensorView } from '../core/view.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import { teamConfig } from './team.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();
const WG = 256;
/** Workgroups that keep a large GPU busy; fewer (rows, or column blocks) split the axis. */
const TARGET_GROUPS = 256;
/** Fewest axis elements per chunk of a split row, and of a split column. */
const MIN_ROW_CHUNK = 4096;
const MIN_COL_CHUNK = 64;

/** The WGSL of an op's accumulator: value type, identity, combine body, load, final store. */
function opText(op: ReduceOp, dtype: DType): Record<string, string> {
  const int = dtype === 'i32';
  const vt = int ? 'i32' : 'f32';
  const lowest = int ? '(-2147483647 - 1)' : '-f32_inf()';
  const highest = int ? '2147483647' : 'f32_inf()';
  const load = int ? 'Acc(ldi_x(k), j)' : 'Acc(ld_x(k), j)';
  switch (op) {
    case 'sum':
    case 'mean':
      return {
        VT: vt,
        IDENTITY: `Acc(${int ? '0' : '0.0'}, 0u)`,
        COMBINE: 'return Acc(a.v + b.v, 0u);',
        LOAD: load,
        STORE: int ? 'sti_out(o, a.v);' : op === 'mean' ? 'st_out(o, a.v / P.div);' : 'st_out(o, a.v);',
      };
    case 'max':
    case 'min': {
      const pick = int ? op : `nan_${op}`;
      return {
        VT: vt,
        IDENTITY: `Acc(${op === 'max' ? lowest : highest}, 0u)`,
        COMBINE: `return Acc(${pick}(a.v, b.v), 0u);`,
        LOAD: load,
        STORE: int ? 'sti_out(o, a.v);' : 'st_out(o, a.v);',
      };
    }
    case 'argmax':
      return {
        VT: vt,
        IDENTITY: `Acc(${lowest}, 0xffffffffu)`,
        // The first NaN wins, then the larger value, then the lower index.
        COMBINE:
          (int
            ? 'var first = a.i < b.i; if (a.v != b.v) { first = a.v > b.v; }'
            : 'let an = is_nan(a.v); let bn = is_nan(b.v); var first = a.i < b.i; ' +
              'if (an || bn) { first = an && (!bn || a.i < b.i); } else if (a.v != b.v) { first = a.v > b.v; }') +
          ' if (first) { return a; } return b;',
        LOAD: load,
        STORE: 'sti_out(o, bitcast<i32>(a.i));',
      };
  }
}

type Mode = 'rows' | 'cols' | 'finish';

function reduceSpec(ctx: WebGpuOpContext, op: ReduceOp, x: TensorView, out: TensorView, mode: Mode, partial: boolean, team: number): KernelSpec {
  const sub = mode === 'rows' ? teamConfig(ctx, team) : undefined;
  const key = `reduce|${op}|${x.dtype}|${mode}|${partial ? 'p' : 'f'}|${team}|${sub?.subgroups ? sub.sg : 0}`;
  return cachedSpec(specs, key, () => {
    const roles = [];
    if (mode !== 'finish') roles.push({ name: 'x', dtype: x.dtype });
    if (mode === 'finish' || partial) roles.push({ name: 'part', dtype: 'i32' as const, write: partial });
    if (!partial) roles.push({ name: 'out', dtype: out.dtype, write: true });
    return {
      op,
      files: mode === 'rows' ? ['team-reduce.wgsl', 'reduce.wgsl'] : ['reduce.wgsl'],
      flags: { ROWS: mode === 'rows', COLS: mode === 'cols', FINISH: mode === 'finish', PARTIAL: partial, SUBGROUPS: sub?.subgroups ?? false },
      consts: { ...opText(op, x.dtype), WG, TEAM: team, SG: sub?.sg ?? 1 },
      roles,
      params: [['rows', 'u32'], ['len', 'u32'], ['inner', 'u32'], ['chunk', 'u32'], ['splits', 'u32'], ['div', 'f32']],
      subgroups: sub?.subgroups ?? false,
    };
  });
}

/** Invocations per row for a contiguous axis: enough to give each a handful of elements. */
function rowTeam(len: number): number {
  if (len <= 64) return 8;
  if (len <= 512) return 32;
  if (len <= 4096) return 64;
  return WG;
}

export function reduce(ctx: WebGpuOpContext, op: ReduceOp, x: TensorView, out: TensorView, plan: ReducePlan): void {
  const { outer, axisLen: len, inner } = plan;
  const div = len;
  if (inner === 1) {
    const rows = outer;
    const splits = len >= 2 * MIN_ROW_CHUNK && rows < TARGET_GROUPS / 2 ? Math.min(Math.ceil(TARGET_GROUPS / rows), Math.ceil(len / MIN_ROW_CHUNK)) : 1;
    if (splits === 1) {
      const team = rowTeam(len);
      const spec = reduceSpec(ctx, op, x, out, 'rows', false, team);
      ctx.dispatcher.run(spec, [x, out], [rows, len, 1, len, 1, div], groups1d(ctx, rows * team, WG));
      return;
    }
    const chunk = Math.ceil(len / splits);
    withPartials(ctx, rows * splits, (part) => {
      const spec = reduceSpec(ctx, op, x, out, 'rows', true, WG);
      ctx.dispatcher.run(spec, [x, part], [rows, len, 1, chunk, splits, div], [splits, rows]);
      finish(ctx, op, x, out, part, rows, splits, div);
    });
    return;
  }
  const outputs = outer * inner;
  const blocks = Math.ceil(outputs / WG);
  const splits = blocks < TARGET_GROUPS / 2 && len >= 2 * MIN_COL_CHUNK ? Math.min(Math.ceil(TARGET_GROUPS / blocks), Math.ceil(len / MIN_COL_CHUNK), ctx.dispatcher.maxGroups) : 1;
  const chunk = Math.ceil(len / splits);
  const [gx, gy] = groups1d(ctx, outputs, WG);
  if (splits === 1) {
    const spec = reduceSpec(ctx, op, x, out, 'cols', false, 1);
    ctx.dispatcher.run(spec, [x, out], [outputs, len, inner, len, 1, div], [gx, gy]);
    return;
  }
  withPartials(ctx, outputs * splits, (part) => {
    const spec = reduceSpec(ctx, op, x, out, 'cols', true, 1);
    ctx.dispatcher.run(spec, [x, part], [outputs, len, inner, chunk, splits, div], [gx, gy ?? 1, splits]);
    finish(ctx, op, x, out, part, outputs, splits, div);
  });
}

function finish(ctx: WebGpuOpContext, op: ReduceOp, x: TensorView, out: TensorView, part: TensorView, outputs: number, splits: number, div: number): void {
  const spec = reduceSpec(ctx, op, x, out, 'finish', false, 1);
  ctx.dispatcher.run(spec, [part, out], [outputs, 0, 1, 0, splits, div], groups1d(ctx, outputs, WG));
}

/** Runs `body` with a scratch of `count` partials (two words each). */
function withPartials(ctx: WebGpuOpContext, count: number, body: (part: TensorView) => void): void {
  const scratch = ctx.scratch(count * 8);
  try {
    body(scratch.view('i32', [count * 2]));
  } finally {
    scratch.release();
  }
}
