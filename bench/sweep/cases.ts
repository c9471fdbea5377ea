/**
 * The shape sweep's cases: for each op family, shapes drawn from a seeded generator (odd sizes and
 * primes, tiny and huge batches, size-1 axes anywhere). A case is plain JSON, so the torch anchor
 * (`bench/anchors/sweep.py`) builds the same op on the same shapes.
 */
import { prng } from '../../test/unit/compute/helpers.js';

export type SweepDtype = 'f32' | 'f16' | 'bf16';

export type SweepSpec =
  | { op: 'unary'; fn: 'exp' | 'tanh' | 'sigmoid' | 'relu'; shape: number[] }
  /** `b: null` is a JS number operand (a scalar). */
  | { op: 'binary'; fn: 'add' | 'mul'; a: number[]; b: number[] | null }
  /** `axis: null` reduces everything. */
  | { op: 'reduce'; fn: 'sum' | 'mean' | 'max' | 'argmax'; shape: number[]; axis: number | null }
  | { op: 'softmax' | 'layerNorm' | 'transpose'; shape: number[] }
  | { op: 'matmul'; batch: number; m: number; n: number; k: number; transA: boolean; transB: boolean }
  | {
      op: 'attention';
      batch: number;
      heads: number;
      kvHeads: number;
      seqQ: number;
      seqK: number;
      dim: number;
      causal: boolean;
      /** Valid keys per batch entry (padding masks the rest), or null for all. */
      keyLengths: number[] | null;
    }
  | { op: 'gru'; batch: number; input: number; hidden: number; steps: number };

export interface SweepCase {
  family: string;
  key: string;
  dtype: SweepDtype;
  spec: SweepSpec;
}

/** The op families, in report order. */
export const FAMILIES = ['unary', 'broadcast', 'reduce', 'softmax', 'layerNorm', 'transpose', 'matmul', 'attention', 'gru'] as const;

const PRIMES = [2, 3, 5, 7, 11, 13, 17, 31, 61, 97, 127, 251, 509, 1021, 2039, 4093, 8191];

class Draw {
  constructor(readonly random: () => number) {}

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.random() * xs.length)]!;
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  /** A size about `target`: a prime near it, an odd size, or a round one. */
  sizeNear(target: number): number {
    const t = Math.max(1, Math.round(target));
    const kind = this.random();
    if (kind < 0.3) return PRIMES.reduce((best, p) => (Math.abs(Math.log(p / t)) < Math.abs(Math.log(best / t)) ? p : best), 1);
    if (kind < 0.75) return Math.max(1, t | 1);
    return Math.max(1, 2 ** Math.round(Math.log2(t)));
  }

  /** A shape of `rank` dims whose element count is drawn log-uniformly in [1, maxElements]. */
  shape(rank: number, maxElements: number): number[] {
    const logTotal = this.random() * Math.log(maxElements);
    // Uneven split: some axes tiny, some long.
    const weights = Array.from({ length: rank }, () => this.random() ** 2 + 0.02);
    const sum = weights.reduce((a, w) => a + w, 0);
    const dims = weights.map((w) => this.sizeNear(Math.exp((logTotal * w) / sum)));
    while (dims.reduce((a, d) => a * d, 1) > maxElements) dims[dims.indexOf(Math.max(...dims))] = Math.ceil(Math.max(...dims) / 2);
    return dims;
  }
}

/** Per-family count of cases, and the element cap that keeps a sweep's memory and time bounded. */
export interface SweepSize {
  perFamily: number;
  maxElements: number;
}

export function sweepCases(seed: number, size: SweepSize): SweepCase[] {
  const cases: SweepCase[] = [];
  const d = new Draw(prng(seed));
  const max = size.maxElements;
  const add = (family: string, dtype: SweepDtype, spec: SweepSpec) => cases.push({ family, key: `${family}#${cases.length}`, dtype, spec });
  const dtype = (): SweepDtype => (d.chance(0.6) ? 'f32' : d.pick(['f16', 'bf16'] as const));

  for (let i = 0; i < size.perFamily; i++) {
    add('unary', dtype(), { op: 'unary', fn: d.pick(['exp', 'tanh', 'sigmoid', 'relu'] as const), shape: d.shape(d.int(1, 3), max) });
  }

  for (let i = 0; i < size.perFamily; i++) {
    const out = d.shape(d.int(2, 4), max);
    // Each operand keeps an axis or makes it 1; b may drop leading axes or be a scalar.
    const a = out.map((n) => (d.chance(0.25) ? 1 : n));
    const bFull = out.map((n, axis) => (a[axis] === 1 ? n : d.chance(0.5) ? 1 : n));
    const b = d.chance(0.1) ? null : d.chance(0.2) ? bFull.slice(d.int(1, bFull.length - 1)) : bFull;
    add('broadcast', dtype(), { op: 'binary', fn: d.pick(['add', 'mul'] as const), a, b });
  }

  for (let i = 0; i < size.perFamily; i++) {
    const shape = d.shape(d.int(1, 4), max);
    const axis = d.chance(0.1) ? null : d.int(0, shape.length - 1);
    add('reduce', dtype(), { op: 'reduce', fn: d.pick(['sum', 'mean', 'max', 'argmax'] as const), shape, axis });
  }

  for (const op of ['softmax', 'layerNorm', 'transpose'] as const) {
    for (let i = 0; i < size.perFamily; i++) {
      const cols = d.chance(0.5) ? d.sizeNear(2 ** (d.random() * 14)) : d.int(1, 16384) | 1;
      const rows = d.sizeNear(Math.max(1, max / cols) ** d.random());
      const shape = op !== 'transpose' && d.chance(0.3) ? [d.int(2, 7), Math.max(1, Math.ceil(rows / 4)), cols] : [rows, cols];
      add(op, dtype(), { op, shape });
    }
  }

  for (let i = 0; i < size.perFamily; i++) {
    const kind = d.pick(['skinny', 'kHeavy', 'batchedSmall', 'square'] as const);
    const big = Math.sqrt(max);
    const dims =
      kind === 'skinny'
        ? { batch: 1, m: d.sizeNear(d.int(1, 64)), n: d.sizeNear(big * d.random()), k: d.sizeNear(big * d.random()) }
        : kind === 'kHeavy'
          ? { batch: 1, m: d.sizeNear(d.int(16, 512)), n: d.sizeNear(d.int(16, 512)), k: d.sizeNear(d.int(4096, max / 512)) }
          : kind === 'batchedSmall'
            ? { batch: d.int(2, 512), m: d.sizeNear(d.int(2, 128)), n: d.sizeNear(d.int(2, 128)), k: d.sizeNear(d.int(2, 256)) }
            : { batch: 1, m: d.sizeNear(d.int(64, big)), n: d.sizeNear(d.int(64, big)), k: d.sizeNear(d.int(64, big)) };
    if (dims.m === 1 && dims.n === 1) dims.n = 3;
    // Products are judged on f32 (full precision) and the 16-bit tensor-core dtypes alike.
    add('matmul', dtype(), { op: 'matmul', ...dims, transA: d.chance(0.3), transB: d.chance(0.4) });
  }

  for (let i = 0; i < size.perFamily; i++) {
    const kind = d.pick(['decode', 'short-vs-long', 'long-vs-short', 'square'] as const);
    const kvHeads = d.pick([1, 2, 4, 8]);
    const heads = kvHeads * d.pick([1, 1, 2, 4, 8]);
    const dim = d.pick([32, 64, 80, 96, 128, 128, 256]);
    const long = d.sizeNear(d.int(1024, 8192));
    const [seqQ, seqK] =
      kind === 'decode' ? [1, long] : kind === 'short-vs-long' ? [d.int(2, 64), long] : kind === 'long-vs-short' ? [long, d.sizeNear(d.int(64, 1024))] : [long, long];
    const tokens = Math.max(seqQ, seqK) * heads * dim;
    const batch = Math.max(1, Math.min(64, Math.round((max / 4 / tokens) * d.random()) || 1));
    const keyLengths = d.chance(0.2) ? Array.from({ length: batch }, () => d.int(1, seqK)) : null;
    add('attention', d.chance(0.2) ? 'f32' : d.pick(['f16', 'bf16'] as const), {
      op: 'attention',
      batch,
      heads,
      kvHeads,
      seqQ,
      seqK,
      dim,
      causal: kind !== 'decode' && d.chance(0.4),
      keyLengths,
    });
  }

  for (let i = 0; i < size.perFamily; i++) {
    const hidden = d.pick([32, 64, 128, 256, 384, 512, 1024]);
    add('gru', 'f32', { op: 'gru', batch: d.pick([1, 3, 8, 32, 64, 256]), input: d.pick([16, 64, 128, 512]), hidden, steps: d.pick([1, 5, 16, 50, 100]) });
  }
  return cases;
}

/** A short human description of a case's shape. */
export function describe(c: SweepCase): string {
  const s = c.spec;
  const dims = (xs: readonly number[]) => `[${xs.join(',')}]`;
  switch (s.op) {
    case 'unary':
      return `${s.fn} ${dims(s.shape)}`;
    case 'binary':
      return `${s.fn} ${dims(s.a)} ${s.b ? dims(s.b) : 'scalar'}`;
    case 'reduce':
      return `${s.fn} ${dims(s.shape)} axis ${s.axis ?? 'all'}`;
    case 'softmax':
    case 'layerNorm':
    case 'transpose':
      return `${s.op} ${dims(s.shape)}`;
    case 'matmul':
      return `${s.batch > 1 ? `${s.batch}x ` : ''}${s.m}x${s.k}${s.transA ? 'ᵀ' : ''} · ${s.k}x${s.n}${s.transB ? 'ᵀ' : ''}`;
    case 'attention':
      return `B${s.batch} H${s.heads}/${s.kvHeads} Sq${s.seqQ} Sk${s.seqK} D${s.dim}${s.causal ? ' causal' : ''}${s.keyLengths ? ' padded' : ''}`;
    case 'gru':
      return `B${s.batch} I${s.input} H${s.hidden} T${s.steps}`;
  }
}
