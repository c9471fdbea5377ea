/**
 * One GRU layer's backward recurrence on WebGPU: per step, from the last, the product that sends
 * the next step's gradient back (sent = dGh_{t+1}·W_hh + dh_{t+1}·z_{t+1}, the matmul kernel with
 * its beta·C epilogue) and one dispatch of `kernels/wgsl/gru-backward-gates.wgsl`; a last product
 * gives dh0. Everything is recorded into the open batch; the queue orders each dispatch after the
 * one it reads. Scratch: the dense dGh of the current step and two [E, B, H] vectors.
 */
import type { GruBackwardParams } from '../core/gru-backward-params.js';
import type { MatmulParams } from '../core/matmul-plan.js';
import type { TensorView } from '../core/view.js';
import { webgpuMatmul } from './matmul.js';
import { cachedSpec, groups1d, type WebGpuOpContext } from './op-context.js';
import type { KernelSpec } from './wgsl.js';

const specs = new Map<string, KernelSpec>();
const WG = 256;

function gatesSpec(p: GruBackwardParams): KernelSpec {
  const flags = { BIH: p.bIh !== undefined, BHH: p.bHh !== undefined, DHSEQ: p.dhSeq !== undefined, DHN: p.dhN !== undefined };
  const f32 = (name: string, write = false) => ({ name, dtype: 'f32' as const, ...(write ? { write } : {}) });
  return cachedSpec(specs, `gru-backward-gates|${Object.values(flags).map(Number).join('')}`, () => ({
    op: 'gruBackward',
    files: ['math.wgsl', 'gru-backward-gates.wgsl'],
    flags,
    roles: [
      f32('gx'),
      f32('hw'),
      f32('h0w'),
      f32('hseq'),
      f32('h0'),
      ...(flags.BIH ? [f32('bih')] : []),
      ...(flags.BHH ? [f32('bhh')] : []),
      ...(flags.DHSEQ ? [f32('dhseq')] : []),
      ...(flags.DHN ? [f32('dhn')] : []),
      f32('sent'),
      f32('carried', true),
      f32('gates', true),
      f32('dgx', true),
      f32('dhw', true),
      f32('dh0w', true),
    ],
    params: [
      ['total', 'u32'],
      ['batch', 'u32'],
      ['steps', 'u32'],
      ['hidden', 'u32'],
      ['step', 'u32'],
    ],
  }));
}

export function webgpuGruBackwardRecurrence(ctx: WebGpuOpContext, p: GruBackwardParams): void {
  const { ensemble: E, batch: B, steps: T, hidden: H } = p;
  const scratch = ctx.scratch(E * B * 5 * H * 4);
  try {
    const gates = scratch.view('f32', [E, B, 3 * H]);
    const sent = scratch.view('f32', [E, B, H], E * B * 3 * H);
    const carried = scratch.view('f32', [E, B, H], E * B * 4 * H);
    const spec = gatesSpec(p);
    const views: TensorView[] = [
      p.gx,
      p.hW,
      p.h0W,
      p.hSeq,
      p.h0,
      ...(p.bIh ? [p.bIh] : []),
      ...(p.bHh ? [p.bHh] : []),
      ...(p.dhSeq ? [p.dhSeq] : []),
      ...(p.dhN ? [p.dhN] : []),
      sent,
      carried,
      gates,
      p.dGx,
      p.dHW,
      p.dH0W,
    ];
    const total = E * B * H;
    for (let t = T - 1; t >= 0; t--) {
      if (t < T - 1) webgpuMatmul(ctx, sendBack(p, gates, carried, sent));
      ctx.dispatcher.run(spec, views, [total, B, T, H, t], groups1d(ctx, total, WG));
    }
    webgpuMatmul(ctx, sendBack(p, gates, carried, p.dh0));
  } finally {
    scratch.release();
  }
}

/** out = gates·W_hh + carried, batched over members. */
function sendBack(p: GruBackwardParams, gates: TensorView, carried: TensorView, out: TensorView): MatmulParams {
  const { ensemble: E, batch: B, hidden: H } = p;
  return {
    a: gates,
    b: p.wHh,
    out,
    c: carried,
    m: B,
    n: H,
    k: 3 * H,
    batch: E,
    aBatchStride: B * 3 * H,
    bBatchStride: 3 * H * H,
    cBatchStride: B * H,
    transA: false,
    transB: false,
    alpha: 1,
    beta: 1,
    precision: p.precision,
    engine: 'auto',
    autotune: false,
  };
}
