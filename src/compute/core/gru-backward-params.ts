/**
 * The sequential part of one GRU layer's backward pass (backpropagation through time), as a
 * backend runs it. Everything that is not sequential is left to the front-end as products over
 * all steps at once: the forward's input and recurrent projections come in precomputed, and the
 * gradients of the gate pre-activations go out, from which the front-end forms the weight, bias
 * and input gradients in a few large products.
 *
 * Step t (0-based) of the forward read h_{t−1} (h0 for t = 0) and wrote h_t (slot t of `hSeq`):
 *
 *   r = σ(gx_r + b_ir + gh_r + b_hr)     z = σ(gx_z + b_iz + gh_z + b_hz)
 *   n = tanh(gx_n + b_in + r·(gh_n + b_hn))     h_t = (1 − z)·n + z·h_{t−1}
 *
 * with gx = x_t·W_ihᵀ and gh = h_{t−1}·W_hhᵀ. Going backwards from the last step, with dh the
 * whole gradient of h_t (what arrives from above, plus what step t + 1 sends back):
 *
 *   da_n = dh·(1 − z)·(1 − n²)     da_z = dh·(h_{t−1} − n)·z·(1 − z)     da_r = da_n·(gh_n + b_hn)·r·(1 − r)
 *   dGx_t = [da_r, da_z, da_n]      dGh_t = [da_r, da_z, da_n·r]
 *   gradient sent to h_{t−1} = dh·z + dGh_t·W_hh
 *
 * Gates are recomputed in f32 (the CPU may use f64) from the f32 inputs; every view is f32.
 * Layouts are batch-major and dense: sequences `[E, B, T, X]`, states `[E, B, H]`.
 */
import type { TensorView } from './view.js';

/** One layer's backward recurrence for E members, B rows and T steps. */
export interface GruBackwardParams {
  /** x_t·W_ihᵀ without bias, `[E, B, T, 3H]`. */
  gx: TensorView;
  /** h_t·W_hhᵀ without bias for the states of `hSeq`, `[E, B, T, 3H]`: slot t serves step t + 1 (the last slot is unused). */
  hW: TensorView;
  /** h0·W_hhᵀ without bias, `[E, B, 3H]` (what step 0 read). */
  h0W: TensorView;
  /** The states the forward wrote, h_1 … h_T, `[E, B, T, H]`. */
  hSeq: TensorView;
  /** The state before step 0, `[E, B, H]`. */
  h0: TensorView;
  /** `[E, 3H, H]`. */
  wHh: TensorView;
  /** `[E, 3H]` each; absent means zero. */
  bIh?: TensorView;
  bHh?: TensorView;
  /** Gradient arriving at each state from above (the layer's emitted sequence), `[E, B, T, H]`; absent means zero. */
  dhSeq?: TensorView;
  /** Gradient of the final state, `[E, B, H]`; absent means zero. */
  dhN?: TensorView;
  /** Out: gradients of x_t·W_ihᵀ (+ b_ih), `[E, B, T, 3H]`. */
  dGx: TensorView;
  /** Out: gradients of h_t·W_hhᵀ (+ b_hh) in the slots of `hW` (slot t: step t + 1's), `[E, B, T, 3H]`; the last slot is 0. */
  dHW: TensorView;
  /** Out: gradient of h0·W_hhᵀ (+ b_hh), `[E, B, 3H]`. */
  dH0W: TensorView;
  /** Out: gradient of h0, `[E, B, H]`. */
  dh0: TensorView;
  ensemble: number;
  batch: number;
  steps: number;
  hidden: number;
  /** How the per-step products dGh_t·W_hh may round (as the forward's option). */
  precision: 'highest' | 'tf32';
}
