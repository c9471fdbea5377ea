/**
 * A float64 GRU written from PyTorch's equations (gate order r, z, n), independent of the
 * library: the reference every GRU test compares with. `round` applies a dtype's storage
 * rounding where the library stores values (the input projections and every state), so f16/bf16
 * results are compared with the same function rather than with unrounded float64.
 */
export interface RefLayer {
  /** [3H·in], [3H·H], [3H], [3H] row-major. */
  wIh: readonly number[];
  wHh: readonly number[];
  bIh?: readonly number[];
  bHh?: readonly number[];
  input: number;
  hidden: number;
  layerNorm?: { gamma?: readonly number[]; beta?: readonly number[]; eps: number };
}

export type Round = (v: number) => number;
const identity: Round = (v) => v;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * One step of one layer for one batch row: x [in], h [H] → h' [H]. `onLayerNorm` is told the layer
 * norm's gain, max|γ|/√(var + eps): how much it magnifies an error in the state it normalises.
 */
export function refCell(layer: RefLayer, x: readonly number[], h: readonly number[], round: Round = identity, onLayerNorm?: (gain: number) => void): number[] {
  const { input: I, hidden: H } = layer;
  const gx = (g: number, j: number) => {
    let s = 0;
    for (let k = 0; k < I; k++) s += x[k]! * layer.wIh[(g * H + j) * I + k]!;
    return round(s);
  };
  const gh = (g: number, j: number) => {
    let s = 0;
    for (let k = 0; k < H; k++) s += h[k]! * layer.wHh[(g * H + j) * H + k]!;
    return s;
  };
  const bi = (i: number) => layer.bIh?.[i] ?? 0;
  const bh = (i: number) => layer.bHh?.[i] ?? 0;
  const out: number[] = [];
  for (let j = 0; j < H; j++) {
    const r = sigmoid(gx(0, j) + bi(j) + gh(0, j) + bh(j));
    const z = sigmoid(gx(1, j) + bi(H + j) + gh(1, j) + bh(H + j));
    const n = Math.tanh(gx(2, j) + bi(2 * H + j) + r * (gh(2, j) + bh(2 * H + j)));
    out.push((1 - z) * n + z * h[j]!);
  }
  const ln = layer.layerNorm;
  if (ln) {
    const mean = out.reduce((a, v) => a + v, 0) / H;
    const variance = out.reduce((a, v) => a + (v - mean) ** 2, 0) / H;
    const inv = 1 / Math.sqrt(variance + ln.eps);
    onLayerNorm?.(inv * Math.max(...(ln.gamma ?? [1]).map(Math.abs)));
    for (let j = 0; j < H; j++) out[j] = (out[j]! - mean) * inv * (ln.gamma?.[j] ?? 1) + (ln.beta?.[j] ?? 0);
  }
  return out.map(round);
}

/**
 * A stack over x [B][T][in] from h0 [L][B][H]: returns the last layer's outputs [B][T][H] and the
 * final states [L][B][H].
 */
export function refGru(
  layers: readonly RefLayer[],
  x: readonly (readonly (readonly number[])[])[],
  h0: readonly (readonly (readonly number[])[])[],
  round: Round = identity,
): { output: number[][][]; hidden: number[][][] } {
  let seq = x.map((row) => row.map((v) => [...v]));
  const hidden: number[][][] = [];
  layers.forEach((layer, l) => {
    const finals: number[][] = [];
    seq = seq.map((steps, b) => {
      let h = [...h0[l]![b]!];
      const outs = steps.map((xt) => (h = refCell(layer, xt, h, round)));
      finals.push(h);
      return outs;
    });
    hidden.push(finals);
  });
  return { output: seq, hidden };
}
