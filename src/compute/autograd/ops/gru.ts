/**
 * gru and gruCell, differentiable in x, h0 and every weight: while recording, the forward is
 * `gruTraining` (which keeps every layer's state sequence) and the backward is backpropagation
 * through time (`ops/gru-backward.ts`). Its record's tensors are saved by storage like any op's,
 * and handed back to the backward as a record of their own. A layer norm in the stack is refused
 * there (gruBackward does not differentiate it).
 */
import type { DType } from '../../core/dtype.js';
import { gruBackward, gruTraining } from '../../ops/gru-backward.js';
import {
  gru as rawGru,
  gruCell as rawGruCell,
  type GruCommonOptions,
  type GruLayerWeights,
  type GruOptions,
  type GruResult,
  type GruWeights,
} from '../../ops/gru.js';
import type { Session } from '../../tensor/session.js';
import { Tensor } from '../../tensor/tensor.js';
import { mayRecord, record, recordingAny } from '../record.js';

/** What a GRU call is differentiated in, in the order its backward returns gradients: x, h0, then each layer's W_ih, W_hh, b_ih, b_hh. */
function inputsOf(x: unknown, h0: unknown, weights: GruWeights): unknown[] {
  const layers: readonly unknown[] = Array.isArray(weights) ? weights : [weights];
  const inputs: unknown[] = [x, h0 ?? undefined];
  for (const layer of layers) {
    const w = (typeof layer === 'object' && layer !== null ? layer : {}) as Partial<GruLayerWeights>;
    inputs.push(w.wIh, w.wHh, w.bIh, w.bHh);
  }
  return inputs;
}

/** gpu.gru (see `ops/gru.ts`), recorded when x, h0 or a weight requires grad. */
export function gru(s: Session, x: Tensor, h0: Tensor | null | undefined, weights: GruWeights, options?: GruOptions): GruResult {
  if (!mayRecord(s)) return rawGru(s, x, h0, weights, options);
  const inputs = inputsOf(x, h0, weights);
  if (!recordingAny(s, 'gru', inputs)) return rawGru(s, x, h0, weights, options);
  const { output, hidden, saved } = gruTraining(s, x, h0, weights, options);
  try {
    const outputs = record('gru', inputs, [output, hidden], saved.tensors(), (grads, tensors, needs) => {
      using again = saved.withTensors(tensors as Tensor[]);
      const g = gruBackward(s, again, { output: grads[0], hidden: grads[1] });
      const perLayer = g.layers.flatMap((l) => [l.wIh, l.wHh, l.bIh, l.bHh]);
      return [g.x, g.h0, ...perLayer].map((d, i) => {
        if (d === undefined || needs[i]) return d;
        d.dispose();
        return undefined;
      });
    });
    return { output: outputs[0]!, hidden: outputs[1]! };
  } finally {
    // The graph holds the record's storages now.
    saved.dispose();
  }
}

/** gpu.gruCell: one step of gru, recorded as such when an input requires grad. */
export function gruCell<D extends DType>(s: Session, x: Tensor<D>, h: Tensor<D>, weights: GruLayerWeights, options: GruCommonOptions = {}): Tensor<D> {
  // Calls it cannot take go to the raw front-end, which names what is wrong as gruCell.
  if (!mayRecord(s) || !recordingAny(s, 'gruCell', inputsOf(x, h, weights)) || Array.isArray(weights) || !(x instanceof Tensor) || x.rank < 2) {
    return rawGruCell(s, x, h, weights, options) as Tensor<D>;
  }
  // x [.., in] as a sequence of one step [.., 1, in]; the final state comes back shaped like h.
  using xs = x.reshape([...x.shape.slice(0, -1), 1, x.shape[x.rank - 1]!]);
  const { output, hidden } = gru(s, xs, h, weights, { ...options, returnSequences: false });
  output.dispose();
  return hidden as Tensor<D>;
}
