/**
 * One sweep case on GpuCompute: its inputs, the call a user would make (through the public API,
 * output allocated and released per call), and a float64 reference on a sample of the output,
 * computed on the host from the inputs as stored. Errors are norm-wise over the sample, against a
 * scale that a correct result cannot miss by more than rounding and a wrong one cannot meet.
 */
import { refCell, type RefLayer } from '../../test/unit/gru/reference.js';
import type { GpuCompute } from '../../src/compute/gpu-compute.js';
import type { Tensor } from '../../src/compute/tensor/tensor.js';
import type { SweepCase, SweepDtype, SweepSpec } from './cases.js';

export interface PreparedCase {
  run(): void;
  /** Norm-wise error of a sample of the output against float64, and the bound it must meet. */
  check(): { error: number; tolerance: number };
  dispose(): void;
}

/** The output's own rounding, with room for a few operations in the dtype. */
const OUTPUT_TOLERANCE: Record<SweepDtype, number> = { f32: 1e-5, f16: 1e-3, bf16: 8e-3 };
/** Unit roundoff of f32 accumulation, for sums whose error grows with their length. */
const F32_UNIT = 2 ** -24;
const SAMPLES = 2048;

const product = (xs: readonly number[]) => xs.reduce((a, b) => a * b, 1);
const stridesOf = (shape: readonly number[]) => shape.map((_, i) => product(shape.slice(i + 1)));

/** Up to `count` distinct-ish indices in [0, n), always including the first and last. */
function sampleIndices(n: number, count: number): number[] {
  if (n <= count) return Array.from({ length: n }, (_, i) => i);
  const out = [0, n - 1];
  for (let i = 2; i < count; i++) out.push(Math.floor(Math.random() * n));
  return out;
}

/** ‖got − ref‖ / ‖scale‖ over the sample. */
function normError(got: ArrayLike<number>, ref: ArrayLike<number>, scale: ArrayLike<number> = ref): number {
  let d = 0;
  let s = 0;
  for (let i = 0; i < ref.length; i++) {
    d += (got[i]! - ref[i]!) ** 2;
    s += scale[i]! ** 2;
  }
  return s === 0 ? Math.sqrt(d) : Math.sqrt(d / s);
}

const host = (t: Tensor) => t.toArraySync() as Float32Array;

export function prepareCase(gpu: GpuCompute, c: SweepCase): PreparedCase {
  const owned: Tensor[] = [];
  const randn = (shape: readonly number[], std = 1) => {
    const t = gpu.randn(shape, { dtype: c.dtype, std, seed: Math.floor(Math.random() * 2 ** 31) });
    owned.push(t);
    return t;
  };
  const base = OUTPUT_TOLERANCE[c.dtype];
  const s: SweepSpec = c.spec;
  let call: () => Tensor;
  let check: (out: Tensor) => { error: number; tolerance: number };

  switch (s.op) {
    case 'unary': {
      const x = randn(s.shape);
      const f = { exp: Math.exp, tanh: Math.tanh, sigmoid: (v: number) => 1 / (1 + Math.exp(-v)), relu: (v: number) => Math.max(v, 0) }[s.fn];
      call = () => gpu[s.fn](x);
      check = (out) => {
        const [hx, ho] = [host(x), host(out)];
        const idx = sampleIndices(hx.length, SAMPLES);
        return { error: normError(idx.map((i) => ho[i]!), idx.map((i) => f(hx[i]!))), tolerance: base };
      };
      break;
    }
    case 'binary': {
      const a = randn(s.a);
      const b = s.b ? randn(s.b) : 1.5;
      const f = s.fn === 'add' ? (x: number, y: number) => x + y : (x: number, y: number) => x * y;
      call = () => gpu[s.fn](a, b);
      check = (out) => {
        const ho = host(out);
        const outShape = out.shape;
        const ha = host(a);
        const hb = typeof b === 'number' ? null : host(b);
        // Index of an output position in an operand: size-1 (or missing leading) axes stay at 0.
        const offset = (shape: readonly number[], pos: readonly number[]) => {
          const lead = outShape.length - shape.length;
          const strides = stridesOf(shape);
          return shape.reduce((o, n, i) => o + (n === 1 ? 0 : pos[i + lead]! * strides[i]!), 0);
        };
        const outStrides = stridesOf(outShape);
        const idx = sampleIndices(ho.length, SAMPLES);
        const ref = idx.map((i) => {
          const pos = outStrides.map((st, axis) => Math.floor(i / st) % outShape[axis]!);
          return f(ha[offset(s.a, pos)]!, hb ? hb[offset(s.b!, pos)]! : 1.5);
        });
        return { error: normError(idx.map((i) => ho[i]!), ref), tolerance: base };
      };
      break;
    }
    case 'reduce': {
      const x = randn(s.shape);
      call = () => (s.axis === null ? gpu[s.fn](x) : gpu[s.fn](x, s.axis));
      check = (out) => {
        const hx = host(x);
        const ho = out.toArraySync();
        const axisLen = s.axis === null ? hx.length : s.shape[s.axis]!;
        const inner = s.axis === null ? 1 : product(s.shape.slice(s.axis + 1));
        const idx = sampleIndices(ho.length, 64);
        const got: number[] = [];
        const ref: number[] = [];
        const scale: number[] = [];
        for (const o of idx) {
          const start = Math.floor(o / inner) * axisLen * inner + (o % inner);
          let sum = 0;
          let abs = 0;
          let max = -Infinity;
          for (let j = 0; j < axisLen; j++) {
            const v = hx[start + j * inner]!;
            sum += v;
            abs += Math.abs(v);
            max = Math.max(max, v);
          }
          const divisor = s.fn === 'mean' ? axisLen : 1;
          if (s.fn === 'argmax') {
            // Any index holding the maximum is right.
            got.push(hx[start + ho[o]! * inner]!);
            ref.push(max);
            scale.push(Math.abs(max) || 1);
          } else {
            got.push(ho[o]!);
            ref.push(s.fn === 'max' ? max : sum / divisor);
            // A sum may cancel: judged against Σ|x| (its rounding scales with that, not with the sum).
            scale.push(s.fn === 'max' ? Math.abs(max) || 1 : abs / divisor);
          }
        }
        const exact = s.fn === 'max' || s.fn === 'argmax';
        return { error: normError(got, ref, scale), tolerance: exact ? 0 : base };
      };
      break;
    }
    case 'softmax':
    case 'layerNorm': {
      const x = randn(s.shape);
      const cols = s.shape.at(-1)!;
      const gamma = s.op === 'layerNorm' ? randn([cols]) : undefined;
      const beta = s.op === 'layerNorm' ? randn([cols]) : undefined;
      call = () => (s.op === 'softmax' ? gpu.softmax(x) : gpu.layerNorm(x, gamma, beta));
      check = (out) => {
        const [hx, ho] = [host(x), host(out)];
        const [hg, hb] = [gamma && host(gamma), beta && host(beta)];
        const got: number[] = [];
        const ref: number[] = [];
        for (const r of sampleIndices(hx.length / cols, 16)) {
          const row = Array.from(hx.subarray(r * cols, (r + 1) * cols));
          if (s.op === 'softmax') {
            const m = Math.max(...row);
            const z = row.reduce((a, v) => a + Math.exp(v - m), 0);
            ref.push(...row.map((v) => Math.exp(v - m) / z));
          } else {
            const mean = row.reduce((a, v) => a + v, 0) / cols;
            const inv = 1 / Math.sqrt(row.reduce((a, v) => a + (v - mean) ** 2, 0) / cols + 1e-5);
            ref.push(...row.map((v, j) => (v - mean) * inv * hg![j]! + hb![j]!));
          }
          got.push(...ho.subarray(r * cols, (r + 1) * cols));
        }
        return { error: normError(got, ref), tolerance: base };
      };
      break;
    }
    case 'transpose': {
      const x = randn(s.shape);
      call = () => gpu.transpose(x);
      check = (out) => {
        const [hx, ho] = [host(x), host(out)];
        const [rows, cols] = s.shape as [number, number];
        const idx = sampleIndices(hx.length, SAMPLES);
        // out[j][i] = x[i][j]
        return { error: normError(idx.map((i) => ho[(i % cols) * rows + Math.floor(i / cols)]!), idx.map((i) => hx[i]!)), tolerance: 0 };
      };
      break;
    }
    case 'matmul': {
      const { batch, m, n, k } = s;
      const lead = batch > 1 ? [batch] : [];
      const a = randn([...lead, ...(s.transA ? [k, m] : [m, k])]);
      const b = randn([...lead, ...(s.transB ? [n, k] : [k, n])]);
      call = () => gpu.matmul(a, b, { transA: s.transA, transB: s.transB });
      check = (out) => {
        const [ha, hb, ho] = [host(a), host(b), host(out)];
        const got: number[] = [];
        const ref: number[] = [];
        for (const o of sampleIndices(batch * m * n, 64)) {
          const [p, i, j] = [Math.floor(o / (m * n)), Math.floor(o / n) % m, o % n];
          let dot = 0;
          for (let x = 0; x < k; x++) {
            const av = ha[p * m * k + (s.transA ? x * m + i : i * k + x)]!;
            const bv = hb[p * k * n + (s.transB ? j * k + x : x * n + j)]!;
            dot += av * bv;
          }
          got.push(ho[o]!);
          ref.push(dot);
        }
        // f32 accumulation's error grows about with √k relative to a random-signed dot product.
        return { error: normError(got, ref), tolerance: base + 4 * F32_UNIT * Math.sqrt(k) };
      };
      break;
    }
    case 'attention': {
      const { batch, heads, kvHeads, seqQ, seqK, dim } = s;
      const q = randn([batch, heads, seqQ, dim]);
      const kT = randn([batch, kvHeads, seqK, dim]);
      const v = randn([batch, kvHeads, seqK, dim]);
      const options = { causal: s.causal, ...(s.keyLengths ? { keyLengths: s.keyLengths } : {}) };
      call = () => gpu.attention(q, kT, v, options);
      check = (out) => {
        const [hq, hk, hv, ho] = [host(q), host(kT), host(v), host(out)];
        const got: number[] = [];
        const ref: number[] = [];
        for (const row of sampleIndices(batch * heads * seqQ, 12)) {
          const [bi, h, i] = [Math.floor(row / (heads * seqQ)), Math.floor(row / seqQ) % heads, row % seqQ];
          const kvBase = (bi * kvHeads + Math.floor(h / (heads / kvHeads))) * seqK * dim;
          const keys = Math.min(s.keyLengths?.[bi] ?? seqK, s.causal ? i + 1 : seqK);
          const scores = Array.from({ length: keys }, (_, j) => {
            let dot = 0;
            for (let x = 0; x < dim; x++) dot += hq[row * dim + x]! * hk[kvBase + j * dim + x]!;
            return dot / Math.sqrt(dim);
          });
          const mx = Math.max(...scores);
          const w = scores.map((sc) => Math.exp(sc - mx));
          const z = w.reduce((a, x) => a + x, 0);
          for (let x = 0; x < dim; x++) {
            let acc = 0;
            for (let j = 0; j < keys; j++) acc += w[j]! * hv[kvBase + j * dim + x]!;
            ref.push(acc / z);
            got.push(ho[row * dim + x]!);
          }
        }
        // The 16-bit kernels round the probabilities to the dtype before P·V.
        return { error: normError(got, ref), tolerance: c.dtype === 'f32' ? 2e-5 : c.dtype === 'f16' ? 2e-3 : 1.2e-2 };
      };
      break;
    }
    case 'gru': {
      const { batch, input, hidden, steps } = s;
      const init = 1 / Math.sqrt(hidden);
      const weights = { wIh: randn([3 * hidden, input], init), wHh: randn([3 * hidden, hidden], init), bIh: randn([3 * hidden], init), bHh: randn([3 * hidden], init) };
      const x = randn([batch, steps, input]);
      const h0 = randn([batch, hidden], 0.5);
      call = () => {
        const r = gpu.gru(x, h0, weights);
        r.hidden.dispose();
        return r.output;
      };
      check = (out) => {
        const layer: RefLayer = { wIh: [...host(weights.wIh)], wHh: [...host(weights.wHh)], bIh: [...host(weights.bIh)], bHh: [...host(weights.bHh)], input, hidden };
        const [hx, hh, ho] = [host(x), host(h0), host(out)];
        const got: number[] = [];
        const ref: number[] = [];
        for (const bi of sampleIndices(batch, 2)) {
          let h = Array.from(hh.subarray(bi * hidden, (bi + 1) * hidden));
          for (let t = 0; t < steps; t++) {
            h = refCell(layer, Array.from(hx.subarray((bi * steps + t) * input, (bi * steps + t + 1) * input)), h);
            ref.push(...h);
            got.push(...ho.subarray((bi * steps + t) * hidden, (bi * steps + t + 1) * hidden));
          }
        }
        return { error: normError(got, ref), tolerance: 1e-4 };
      };
      break;
    }
  }

  return {
    run: () => call().dispose(),
    check() {
      const out = call();
      try {
        return check(out);
      } finally {
        out.dispose();
      }
    },
    dispose: () => owned.forEach((t) => t.dispose()),
  };
}
