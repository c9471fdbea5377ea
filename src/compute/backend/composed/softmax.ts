/**
 * softmax and logSoftmax over rows, composed from the core ops for a backend without its own:
 * m = max, d = x − m, e = exp(d), s = Σe, then e / s or d − log s. Intermediates are f32, and the
 * special values come out as the CPU backend's (a NaN or +∞ in a row, or a row of −∞, gives NaN).
 */
import { planBroadcast } from '../../core/broadcast.js';
import type { TensorView } from '../../core/view.js';
import type { BackendCore } from '../backend.js';
import { Temporaries } from './temporaries.js';

export function composedSoftmax(backend: BackendCore, x: TensorView, out: TensorView, rows: number, cols: number, log: boolean): void {
  using temps = new Temporaries(backend);
  const plan = { outer: rows, axisLen: cols, inner: 1 };
  const byRow = planBroadcast('softmax', [rows, cols], [rows, 1]);
  const xf = temps.f32(x);
  const max = temps.view('f32', [rows, 1]);
  backend.reduce('max', xf, max, plan);
  const shifted = temps.view('f32', [rows, cols]);
  backend.binary('sub', xf, max, shifted, byRow);
  const exps = temps.view('f32', [rows, cols]);
  backend.unary('exp', shifted, exps);
  const sums = temps.view('f32', [rows, 1]);
  backend.reduce('sum', exps, sums, plan);
  const result = out.dtype === 'f32' ? out : temps.view('f32', [rows, cols]);
  if (log) {
    const logSums = temps.view('f32', [rows, 1]);
    backend.unary('log', sums, logSums);
    backend.binary('sub', shifted, logSums, result, byRow);
  } else {
    backend.binary('div', exps, sums, result, byRow);
  }
  if (result !== out) backend.cast(result, out);
}
