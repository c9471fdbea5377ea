/**
 * A binary op with a JS number operand, composed for a backend without its own: the number goes
 * into a one-element tensor, then the broadcasting binary op runs with it.
 */
import { planBroadcast } from '../../core/broadcast.js';
import type { BinaryOp } from '../../core/elementwise-ops.js';
import type { TensorView } from '../../core/view.js';
import type { BackendCore } from '../backend.js';
import { Temporaries } from './temporaries.js';

export function composedBinaryScalar(
  backend: BackendCore,
  op: BinaryOp,
  x: TensorView,
  scalar: number,
  scalarFirst: boolean,
  out: TensorView,
): void {
  using temps = new Temporaries(backend);
  const s = temps.view(x.dtype, []);
  backend.fill(s, scalar);
  if (scalarFirst) backend.binary(op, s, x, out, planBroadcast(op, [], x.shape));
  else backend.binary(op, x, s, out, planBroadcast(op, x.shape, []));
}
