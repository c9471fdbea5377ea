/**
 * layerNorm over rows, composed from the core ops for a backend without its own:
 * c = x − mean, v = mean(c²), y = c · rsqrt(v + eps) · gamma + beta (biased variance, as the
 * CPU backend and PyTorch), with f32 intermediates. c is centred twice: the f32 mean of a row
 * far from 0 is off by up to half an ulp of its magnitude, a shift every element of c would
 * carry into y (relative to the row's spread); the mean of c itself is small, and so is its error.
 */
import { planBroadcast } from '../../core/broadcast.js';
import type { TensorView } from '../../core/view.js';
import type { BackendCore } from '../backend.js';
import { Temporaries } from './temporaries.js';

export function composedLayerNorm(
  backend: BackendCore,
  x: TensorView,
  gamma: TensorView | undefined,
  beta: TensorView | undefined,
  out: TensorView,
  rows: number,
  cols: number,
  eps: number,
): void {
  using temps = new Temporaries(backend);
  const shape = [rows, cols];
  const plan = { outer: rows, axisLen: cols, inner: 1 };
  const byRow = planBroadcast('layerNorm', shape, [rows, 1]);
  const byColumn = planBroadcast('layerNorm', shape, [cols]);
  const same = planBroadcast('layerNorm', shape, shape);
  const xf = temps.f32(x);
  const mean = temps.view('f32', [rows, 1]);
  backend.reduce('mean', xf, mean, plan);
  const firstCentered = temps.view('f32', shape);
  backend.binary('sub', xf, mean, firstCentered, byRow);
  const drift = temps.view('f32', [rows, 1]);
  backend.reduce('mean', firstCentered, drift, plan);
  const centered = temps.view('f32', shape);
  backend.binary('sub', firstCentered, drift, centered, byRow);
  const squares = temps.view('f32', shape);
  backend.binary('mul', centered, centered, squares, same);
  const variance = temps.view('f32', [rows, 1]);
  backend.reduce('mean', squares, variance, plan);
  const epsilon = temps.view('f32', []);
  backend.fill(epsilon, eps);
  const shiftedVariance = temps.view('f32', [rows, 1]);
  backend.binary('add', variance, epsilon, shiftedVariance, planBroadcast('layerNorm', [rows, 1], []));
  const invStd = temps.view('f32', [rows, 1]);
  backend.unary('rsqrt', shiftedVariance, invStd);
  let y = temps.view('f32', shape);
  backend.binary('mul', centered, invStd, y, byRow);
  for (const [param, op] of [[gamma, 'mul'], [beta, 'add']] as const) {
    if (!param) continue;
    const next = temps.view('f32', shape);
    backend.binary(op, y, temps.f32(param), next, byColumn);
    y = next;
  }
  if (out.dtype === 'f32') backend.copy(out, y);
  else backend.cast(y, out);
}
