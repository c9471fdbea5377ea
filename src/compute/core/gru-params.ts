/**
 * One GRU layer's recurrence as a backend runs it: the input projections come precomputed (one
 * product for all steps), the backend runs the steps.
 */
import type { TensorView } from './view.js';

/** The recurrence path of a CUDA backend; see `GruCommonOptions.path`. */
export type GruPath = 'auto' | 'fused' | 'steps' | 'persistent';

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
