/**
 * One GRU layer's recurrence as a backend runs it: the input projections come precomputed (one
 * product for all steps), the backend runs the steps.
 */
import type { TensorView } from './view.js';

/** The recurrence path of a CUDA backend; see `GruCommonOptions.path`. */
export type GruPath = 'auto' | 'sequence' | 'fused' | 'steps' | 'persistent';

/**
 * One layer's recurrence for E members, B rows and T steps, as a backend runs it. The input
 * projections come precomputed; the backend adds h·W_hhᵀ, both biases, the gates and the update
 * (h' = (1 − z)·n + z·h, n = tanh(gx_n + b_in + r·(gh_n + b_hn))), computed in f32 (the CPU may
 * use f64), and rounds every stored state to the dtype; the next step reads the rounded state.
 */
export interface GruRecurrenceParams {
  /** Input projections x·W_ihᵀ without bias; gate g of unit j of (e, b, t) at e·gxStrides[0] + b·[1] + t·[2] + g·H + j. */
  gx: TensorView;
  gxStrides: readonly [number, number, number];
  /** [E, 3H, H]. */
  wHh: TensorView;
  /** [E, 3H] each; absent means zero. */
  bIh?: TensorView;
  bHh?: TensorView;
  /** State before step 0, dense [E, B, H]. */
  h0: TensorView;
  /** Where h_t goes: e·seqStrides[0] + b·[1] + (t mod slots)·[2] + j. */
  hSeq: TensorView;
  seqStrides: readonly [number, number, number];
  /** T for a whole sequence, 2 for a ring that keeps the last two states. */
  slots: number;
  /** Final state, dense [E, B, H]. */
  hN: TensorView;
  /** Normalise each new state over H (then carried on): gamma/beta [E, H] (absent: 1 and 0). */
  layerNorm?: { gamma?: TensorView; beta?: TensorView; eps: number };
  ensemble: number;
  batch: number;
  steps: number;
  hidden: number;
  precision: 'highest' | 'tf32';
  path: GruPath;
}

/**
 * A whole autoregressive rollout of a one-layer GRU (E members) with its output projection, as a
 * backend may run it in one go: x_0 = `state`; per step t, h_t = gru(x_t, h_{t−1}) (as
 * {@link GruRecurrenceParams}, with x_t·W_ihᵀ rounded to the dtype as a product tensor would be)
 * and y_t = h_t·W_outᵀ + b_out (the product rounded before the bias when the projection is per
 * member, as a product then an add), stored as states[e, b, t] and fed back as x_{t+1}.
 */
export interface GruRolloutParams {
  /** x_0: [E, B, S], or [B, S] shared by every member (`stateShared`). */
  state: TensorView;
  stateShared: boolean;
  /** Dense [E, B, H]; absent means zero. */
  h0?: TensorView;
  /** [E, 3H, S] and [E, 3H, H]. */
  wIh: TensorView;
  wHh: TensorView;
  /** [E, 3H] each; absent means zero. */
  bIh?: TensorView;
  bHh?: TensorView;
  /** [E, S, H], or [S, H] shared by every member (`projectionShared`). */
  outWeight: TensorView;
  /** [E, S] or [S] (as the weight); absent means zero. */
  outBias?: TensorView;
  projectionShared: boolean;
  /** Out: [E, B, steps, S]. */
  states: TensorView;
  /** Out: the last step's state, dense [E, B, H]. */
  hN: TensorView;
  ensemble: number;
  batch: number;
  steps: number;
  hidden: number;
  /** S: the state (layer 0's input) size. */
  input: number;
  precision: 'highest' | 'tf32';
}
