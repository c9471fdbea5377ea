import { describe, expect, it } from 'vitest';
import type { BroadcastPlan } from '../../../src/compute/core/broadcast.js';
import type { DType } from '../../../src/compute/core/dtype.js';
import { makeView, type TensorView } from '../../../src/compute/core/view.js';
import { prng } from '../compute/helpers.js';
import { kernelNames } from '../../../src/compute/cuda/kernel-specs.js';
import { rowKernelNames, softmaxSpec } from '../../../src/compute/gpu/kernel-specs.js';
import {
  accessKind,
  aligned16,
  CLUSTER_ELEMENTS_PER_THREAD,
  clusterSoftmaxLaunch,
  MAX_CACHED_COLS,
  MAX_CLUSTER,
  planClusterSoftmax,
  fastDivisor,
  planBinary,
  planReduce,
  planRowKernel,
  planSplitSoftmax,
  planStagedSoftmax,
  planThreadSoftmax,
  planTranspose,
} from '../../../src/compute/gpu/launch-plans.js';

const buffer = { byteLength: 1 << 30 };
const view = (dtype: DType, shape: number[], offset = 0): TensorView => makeView(buffer, dtype, shape, offset);

describe('alignment', () => {
  it('a view is 16-byte aligned when its byte offset is a multiple of 16', () => {
    expect(aligned16(view('f32', [8], 4))).toBe(true);
    expect(aligned16(view('f32', [8], 2))).toBe(false);
    expect(aligned16(view('f16', [8], 8))).toBe(true);
    expect(aligned16(view('bf16', [8], 4))).toBe(false);
    expect(accessKind(view('f32', [4]), view('f32', [4], 4))).toBe('vec');
    expect(accessKind(view('f32', [4]), view('f32', [4], 1))).toBe('scalar');
  });
});

describe('planClusterSoftmax', () => {
  it('splits rows past 32K columns over CTAs of 256 threads holding 32 elements each', () => {
    expect(planClusterSoftmax(65_536, 'f32', true)).toEqual({ block: 256, cluster: 8, slice: 8192 });
    expect(planClusterSoftmax(65_536, 'bf16', true)).toEqual({ block: 256, cluster: 8, slice: 8192 });
    // A short last slice: 40 000 columns over 5 CTAs of at most 8192.
    expect(planClusterSoftmax(40_000, 'f32', true)).toEqual({ block: 256, cluster: 5, slice: 8000 });
    expect(planClusterSoftmax(32_776, 'f16', true)).toEqual({ block: 256, cluster: 5, slice: 6560 });
  });

  it('keeps rows a block holds, unaligned, odd and over-long rows off clusters', () => {
    expect(planClusterSoftmax(32_768, 'f32', true)).toBeUndefined();
    expect(planClusterSoftmax(32_768, 'bf16', true)).toBeUndefined();
    expect(planClusterSoftmax(65_536, 'f32', false)).toBeUndefined();
    expect(planClusterSoftmax(40_002, 'f32', true)).toBeUndefined();
    expect(planClusterSoftmax(65_540, 'f32', true)).toBeUndefined();
  });

  it('every launch covers the row with whole vectors and fits a cluster', () => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const width = dtype === 'f32' ? 4 : 8;
      for (let cols = 30_000; cols <= 70_000; cols += width) {
        const launch = planClusterSoftmax(cols, dtype, true);
        if (cols <= MAX_CACHED_COLS || cols > 65_536) {
          expect(launch).toBeUndefined();
          continue;
        }
        if (!launch) throw new Error(`${dtype} ${cols}: no cluster launch`);
        expect(launch.cluster).toBeGreaterThanOrEqual(2);
        expect(launch.cluster).toBeLessThanOrEqual(MAX_CLUSTER);
        expect(launch.slice % width).toBe(0);
        expect(launch.slice).toBeLessThanOrEqual(launch.block * CLUSTER_ELEMENTS_PER_THREAD);
        expect(launch.slice * launch.cluster).toBeGreaterThanOrEqual(cols);
        expect(launch.slice * (launch.cluster - 1)).toBeLessThan(cols); // no CTA left without columns
      }
    }
    expect(clusterSoftmaxLaunch(16_384, 'f32', 512)).toBeUndefined(); // one CTA holds it all
  });
});

describe('planBinary', () => {
  const plan = (kind: BroadcastPlan['kind'], outShape: number[], aStrides: number[], bStrides: number[]): BroadcastPlan => ({
    kind,
    shape: outShape,
    outShape,
    aStrides,
    bStrides,
  });

  it('picks the flat kernels with vector access when aligned', () => {
    const a = view('f32', [1000]);
    expect(planBinary(plan('same', [1000], [1], [1]), a, a, a)).toEqual({ kind: 'flat', kernel: 'binary_same_vec', n: 1000 });
    expect(planBinary(plan('same', [999], [1], [1]), view('f32', [999], 1), a, a).kernel).toBe('binary_same_scalar');
    // The scalar operand's alignment does not matter.
    expect(planBinary(plan('scalarB', [1000], [1], [0]), a, view('f32', [], 3), a).kernel).toBe('binary_scalar_b_vec');
    expect(planBinary(plan('scalarA', [1000], [0], [1]), view('f32', [], 3), a, a).kernel).toBe('binary_scalar_a_vec');
  });

  it('row kernels read the row in vectors when cols is a multiple of the vector width, else wrap it per element', () => {
    const out = view('f16', [6, 16]);
    const rowPlan = plan('rowB', [6, 16], [16, 1], [0, 1]);
    expect(planBinary(rowPlan, out, view('f16', [16]), out)).toEqual({ kind: 'row', kernel: 'binary_row_b_vec', n: 96, cols: 16 });
    const odd = view('f16', [6, 12]);
    // The row's own alignment does not matter to the wrapping kernel; the full side's and the output's do.
    expect(planBinary(plan('rowA', [6, 12], [0, 1], [12, 1]), view('f16', [12], 1), odd, odd).kernel).toBe('binary_row_a_wrap');
    expect(planBinary(plan('rowB', [6, 12], [12, 1], [0, 1]), odd, view('f16', [12]), view('f16', [6, 12], 3)).kernel).toBe('binary_row_b_scalar');
  });

  it('general plans are padded to six dims and use 32-bit indexing, with magic divisors, below 2^31 elements', () => {
    const out = view('f32', [3, 5, 7]);
    const launch = planBinary(plan('general', [3, 5, 7], [0, 7, 1], [5, 1, 0]), view('f32', [5, 7]), view('f32', [3, 5, 1]), out);
    const magic = [3, 5, 7].map((d) => fastDivisor(d).magic);
    expect(launch).toEqual({
      kind: 'general',
      kernel: 'binary_general32',
      n: 105,
      args: [1, 1, 1, 3, 5, 7, 1, 1, 1, ...magic, 0, 0, 0, 2, 3, 3, 0, 0, 0, 0, 7, 1, 0, 0, 0, 5, 1, 0],
    });
    expect(planBinary(plan('general', [2 ** 25, 64], [0, 1], [1, 0]), out, out, { ...out, size: 2 ** 31 })).toEqual({
      kind: 'general',
      kernel: 'binary_general64',
      n: 2 ** 31,
      args: [1, 1, 1, 1, 2 ** 25, 64, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0],
    });
  });

  it('fastDivisor divides exactly below 2^31', () => {
    // x = (umulhi(x, magic) + x) >> shift, in 32-bit unsigned arithmetic as the kernels do it.
    const divide = (x: number, { magic, shift }: { magic: number; shift: number }) =>
      Number((((BigInt(x) * BigInt(magic)) >> 32n) + BigInt(x)) >> BigInt(shift));
    const random = prng(7);
    const divisors = [1, 2, 3, 5, 7, 13, 61, 251, 641, 2 ** 16 + 1, 2 ** 30 - 1, 2 ** 30, 2 ** 30 + 3, 2 ** 31 - 1];
    for (let i = 0; i < 200; i++) divisors.push(1 + Math.floor(random() * (2 ** (1 + Math.floor(random() * 31)) - 1)));
    for (const d of divisors) {
      const fast = fastDivisor(d);
      expect(fast.magic).toBeGreaterThanOrEqual(0);
      expect(fast.magic).toBeLessThan(2 ** 32);
      const xs = [0, 1, d - 1, d, d + 1, 2 * d - 1, 2 ** 31 - 1, 2 ** 31 - 2, 2 ** 31 - 1 - (2 ** 31 - 1) % d, 2 ** 31 - 2 - (2 ** 31 - 1) % d];
      for (let i = 0; i < 300; i++) xs.push(Math.floor(random() * 2 ** 31));
      for (const x of xs) if (x >= 0 && x < 2 ** 31) expect(divide(x, fast), `${x} / ${d}`).toBe(Math.floor(x / d));
    }
  });

  it('general plans with a last dim of 256 or more index per row', () => {
    // [4000, 1, 3000] + [1, 5, 3000]: the size-1 middle axis of a.
    const out = view('f32', [4000, 5, 3000]);
    expect(planBinary(plan('general', [4000, 5, 3000], [3000, 0, 1], [0, 3000, 1]), out, out, out)).toEqual({
      kind: 'generalRows',
      kernel: 'binary_general_rows32',
      rows: 20_000,
      cols: 3000,
      args: [1, 1, 1, 4000, 5, 3000, ...[1, 1, 1, 4000, 5, 3000].map((d) => fastDivisor(d).magic), 0, 0, 0, 12, 3, 12, 0, 0, 0, 3000, 0, 1, 0, 0, 0, 0, 3000, 1],
    });
    const huge = { ...out, size: 2 ** 31 };
    expect(planBinary(plan('general', [2 ** 15, 2 ** 16], [0, 1], [1, 0]), out, out, huge)).toMatchObject({ kernel: 'binary_general_rows64', rows: 2 ** 15 });
    expect(planBinary(plan('general', [9, 255], [0, 1], [1, 0]), out, out, view('f32', [9, 255])).kind).toBe('general');
  });
});

describe('planThreadSoftmax', () => {
  it('gives rows of at most 16 columns a thread each', () => {
    expect(planThreadSoftmax(537_765, 2)).toEqual({ kernel: 'softmax_thread', block: 256, grid: 2101 });
    expect(planThreadSoftmax(3, 16)).toEqual({ kernel: 'softmax_thread', block: 256, grid: 1 });
    expect(planThreadSoftmax(3, 17)).toBeUndefined();
  });
});

describe('planRowKernel', () => {
  it('uses a warp per row while a row fits 32 elements per lane', () => {
    expect(planRowKernel('softmax', 10, 1, 'f32', true)).toEqual({ kernel: 'softmax_warp_scalar_1', block: 128, grid: 3 });
    expect(planRowKernel('softmax', 8, 128, 'f32', true)).toEqual({ kernel: 'softmax_warp_vec_1', block: 128, grid: 2 });
    expect(planRowKernel('softmax', 8, 1024, 'f32', true).kernel).toBe('softmax_warp_vec_8');
    expect(planRowKernel('softmax', 8, 1023, 'f32', true).kernel).toBe('softmax_warp_scalar_32');
    expect(planRowKernel('softmax', 8, 1024, 'f32', false).kernel).toBe('softmax_warp_scalar_32');
  });

  it('uses a block per row with the row in registers up to 32K columns', () => {
    // 32-bit rows: the fewest chunks per thread that keep blocks at ≤ 512 threads.
    expect(planRowKernel('layernorm', 5, 4096, 'f32', true)).toEqual({ kernel: 'layernorm_block_vec_2', block: 512, grid: 5 });
    expect(planRowKernel('layernorm', 5, 32768, 'f32', true)).toEqual({ kernel: 'layernorm_block_vec_8', block: 1024, grid: 5 });
    expect(planRowKernel('softmax', 2, 1025, 'f32', true)).toEqual({ kernel: 'softmax_block_scalar_4', block: 288, grid: 2 });
    // 16-bit rows: 32 elements per thread.
    expect(planRowKernel('layernorm', 5, 4096, 'bf16', true)).toEqual({ kernel: 'layernorm_block_vec_4', block: 128, grid: 5 });
    expect(planRowKernel('layernorm', 5, 32768, 'f16', true)).toEqual({ kernel: 'layernorm_block_vec_4', block: 1024, grid: 5 });
    expect(planRowKernel('softmax', 2, 1025, 'bf16', true)).toEqual({ kernel: 'softmax_block_scalar_16', block: 96, grid: 2 });
  });

  it('falls back to the looped kernel beyond what registers hold', () => {
    expect(planRowKernel('softmax', 2, MAX_CACHED_COLS + 4, 'f32', true).kernel).toBe('softmax_looped');
    expect(planRowKernel('softmax', 2, 16 * 1024 + 1, 'f32', true).kernel).toBe('softmax_looped');
  });

  it('stages rows of 64 KB and more, with shared memory for one row per block', () => {
    const staged = (cols: number, dtype: DType, vecOk = true, prefix = 'softmax') =>
      planStagedSoftmax(planRowKernel(prefix, 5000, cols, dtype, vecOk), cols, dtype);
    expect(staged(32_768, 'f32')).toEqual({ kernel: 'softmax_staged_full_8', block: 1024, sharedMemBytes: 131_072 });
    expect(staged(16_384, 'f32')).toEqual({ kernel: 'softmax_staged_full_8', block: 512, sharedMemBytes: 65_536 });
    expect(staged(32_768, 'bf16')).toEqual({ kernel: 'softmax_staged_full_4', block: 1024, sharedMemBytes: 65_536 });
    // Rows that leave some threads' last chunks outside take the checked kernel.
    expect(staged(20_000, 'f32')).toEqual({ kernel: 'softmax_staged_edge_8', block: 640, sharedMemBytes: 81_920 });
    expect(staged(32_764, 'f32')).toEqual({ kernel: 'softmax_staged_edge_8', block: 1024, sharedMemBytes: 131_072 });
    expect(staged(8192, 'f32')).toBeUndefined();
    expect(staged(16_384, 'bf16')).toBeUndefined();
    expect(staged(32_768, 'f32', false)).toBeUndefined();
    expect(staged(32_767, 'f32')).toBeUndefined();
    expect(staged(32_768, 'f32', true, 'layernorm')).toBeUndefined();
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const names = new Set(kernelNames(softmaxSpec(dtype)));
      for (let cols = 16_384; cols <= 32_768; cols += 8) {
        const launch = staged(cols, dtype);
        if (!launch) continue;
        expect(names.has(launch.kernel), `${dtype} ${cols}: ${launch.kernel}`).toBe(true);
        // _full exactly when every thread's chunks lie inside the row.
        expect(launch.kernel.includes('full')).toBe(launch.block * 32 === cols);
      }
    }
  });

  it('splits f32 rows of exactly 32K columns between registers and shared memory', () => {
    expect(planSplitSoftmax(32_768, 'f32', true)).toEqual({ kernel: 'softmax_split_3_5', block: 1024, sharedMemBytes: 81_920 });
    expect(kernelNames(softmaxSpec('f32'))).toContain('softmax_split_3_5');
    // Other lengths, unaligned tensors and 16-bit rows stay with the staged kernel.
    expect(planSplitSoftmax(16_384, 'f32', true)).toBeUndefined();
    expect(planSplitSoftmax(32_764, 'f32', true)).toBeUndefined();
    expect(planSplitSoftmax(32_768, 'f32', false)).toBeUndefined();
    expect(planSplitSoftmax(32_768, 'bf16', true)).toBeUndefined();
    expect(planSplitSoftmax(32_768, 'f16', true)).toBeUndefined();
  });

  it('only ever names kernels that row.cuh instantiates, with at most 1024 threads', () => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const names = new Set(rowKernelNames('softmax', dtype));
      for (let cols = 1; cols <= 40_000; cols += cols < 2100 ? 1 : 97) {
        for (const vecOk of [true, false]) {
          const launch = planRowKernel('softmax', 3, cols, dtype, vecOk);
          expect(names.has(launch.kernel)).toBe(true);
          expect(launch.block).toBeLessThanOrEqual(1024);
          expect(launch.block % 32).toBe(0);
          const match = /_(warp|block)_(vec|scalar)_(\d+)$/.exec(launch.kernel);
          if (match) {
            // The team covers the row: threads × chunks × width ≥ cols.
            const width = match[2] === 'vec' ? (dtype === 'f32' ? 4 : 8) : 1;
            const team = match[1] === 'warp' ? 32 : launch.block;
            expect(team * Number(match[3]) * width).toBeGreaterThanOrEqual(cols);
          }
        }
      }
    }
  });
});

describe('planReduce', () => {
  const device = { residentBlocks: 1056, block: 256 };

  it('reduces everything in one launch split across the resident grid', () => {
    const x = view('f32', [2 ** 26]);
    expect(planReduce({ outer: 1, axisLen: 2 ** 26, inner: 1 }, x, device)).toEqual({
      kind: 'full',
      splits: 1056,
      block: 256,
      access: 'vec',
    });
    // Each split owns at least 4096 elements; misaligned data reads element by element.
    expect(planReduce({ outer: 1, axisLen: 90_000, inner: 1 }, view('f32', [90_000], 1), device)).toEqual({
      kind: 'full',
      splits: 22,
      block: 256,
      access: 'scalar',
    });
    // Below 2^16 elements one block does it all (no scratch, no combine).
    expect(planReduce({ outer: 1, axisLen: 5000, inner: 1 }, x, device)).toMatchObject({ kind: 'rowsBlock', grid: 1 });
    expect(planReduce({ outer: 1, axisLen: 65535, inner: 1 }, x, device)).toMatchObject({ kind: 'rowsBlock', grid: 1, block: 512 });
  });

  it('splits few long rows into partials; rows that are not 16-byte multiples read element by element', () => {
    expect(planReduce({ outer: 3, axisLen: 100_000, inner: 1 }, view('f32', [3, 100_000]), device)).toEqual({
      kind: 'split',
      splits: 25,
      block: 256,
      access: 'vec',
    });
    expect(planReduce({ outer: 2, axisLen: 10_001, inner: 1 }, view('f32', [2, 10_001]), device)).toMatchObject({
      kind: 'split',
      access: 'scalar',
    });
  });

  it('asks for the split kernel (its occupancy) only for an axis long enough to split', () => {
    let asked = 0;
    const counting = {
      get residentBlocks() {
        asked++;
        return 1056;
      },
      get block() {
        asked++;
        return 256;
      },
    };
    const unsplit: [number, number, number][] = [
      [2048, 1024, 1],
      [1, 2048, 1],
      [1, 65535, 1],
      [5000, 8191, 1],
      [3, 100, 7],
      [2, 1000, 100],
      [10, 5, 10],
    ];
    for (const [outer, axisLen, inner] of unsplit) {
      expect(planReduce({ outer, axisLen, inner }, view('f32', [outer, axisLen, inner]), counting).kind).not.toMatch(/split|full/i);
    }
    expect(asked).toBe(0);
    expect(planReduce({ outer: 1, axisLen: 2 ** 20, inner: 1 }, view('f32', [2 ** 20]), counting).kind).toBe('full');
    expect(asked).toBeGreaterThan(0);
  });

  it('uses a warp or a block per row when rows are many', () => {
    expect(planReduce({ outer: 5000, axisLen: 300, inner: 1 }, view('f32', [5000, 300]), device)).toEqual({ kind: 'rowsWarp', grid: 1250 });
    expect(planReduce({ outer: 5000, axisLen: 3001, inner: 1 }, view('f32', [5000, 3001]), device)).toEqual({
      kind: 'rowsBlock',
      grid: 5000,
      block: 256,
      access: 'scalar',
    });
    expect(planReduce({ outer: 4096, axisLen: 4096, inner: 1 }, view('bf16', [4096, 4096]), device)).toMatchObject({ access: 'vec' });
    expect(planReduce({ outer: 3, axisLen: 100, inner: 1 }, view('f32', [3, 100]), device)).toEqual({ kind: 'rowsWarp', grid: 1 });
  });

  it('reduces a strided axis with the column kernel, split along the axis when columns are few', () => {
    expect(planReduce({ outer: 7, axisLen: 50, inner: 3 }, view('f32', [7, 50, 3]), device)).toEqual({
      kind: 'cols',
      block: [4, 64],
      grid: [1, 7],
    });
    expect(planReduce({ outer: 100_000, axisLen: 40, inner: 1000 }, view('f32', [100_000, 40, 1000]), device)).toEqual({
      kind: 'cols',
      block: [32, 8],
      grid: [32, 65535],
    });
    expect(planReduce({ outer: 1, axisLen: 4096, inner: 4096 }, view('f32', [4096, 4096]), device)).toEqual({
      kind: 'colsSplit',
      block: [32, 8],
      grid: [128, 1, 17],
    });
    expect(planReduce({ outer: 1, axisLen: 100_000, inner: 3 }, view('f32', [100_000, 3]), device)).toEqual({
      kind: 'colsSplit',
      block: [4, 64],
      grid: [1, 1, 97],
    });
    // A split's second launch does not pay below 2^18 elements, unless a thread would walk 128 rows or more.
    expect(planReduce({ outer: 1, axisLen: 2048, inner: 5 }, view('f32', [2048, 5]), device)).toEqual({ kind: 'cols', block: [8, 32], grid: [1, 1] });
    expect(planReduce({ outer: 1, axisLen: 2039, inner: 41 }, view('f32', [2039, 41]), device)).toEqual({
      kind: 'colsSplit',
      block: [32, 8],
      grid: [2, 1, 15],
    });
  });

  it('walks an axis of at most 32 elements with a thread per output, whatever its stride', () => {
    expect(planReduce({ outer: 176_593 * 3, axisLen: 3, inner: 2 }, view('f16', [176_593, 3, 2]), device)).toEqual({ kind: 'short', grid: 4139 });
    expect(planReduce({ outer: 871_955, axisLen: 13, inner: 1 }, view('f32', [871_955, 13]), device)).toEqual({ kind: 'short', grid: 3407 });
    expect(planReduce({ outer: 1, axisLen: 32, inner: 9 }, view('f32', [32, 9]), device)).toEqual({ kind: 'short', grid: 1 });
    expect(planReduce({ outer: 2 ** 30, axisLen: 2, inner: 1 }, view('f32', [2 ** 30, 2]), device)).toEqual({ kind: 'short', grid: 2 ** 20 });
    // One output of a short axis is a row like any other.
    expect(planReduce({ outer: 1, axisLen: 20, inner: 1 }, view('f32', [20]), device)).toEqual({ kind: 'rowsWarp', grid: 1 });
  });
});

describe('planTranspose', () => {
  it('tiles 32×32 and caps y and z at 65535 (the kernel strides beyond)', () => {
    expect(planTranspose(2, 33, 65, 4, true)).toEqual({ kind: 'tiled', kernel: 'transpose_tiled', grid: [3, 2, 2], block: [32, 8] });
    expect(planTranspose(70_000, 32 * 70_000, 9, 4, true)).toEqual({ kind: 'tiled', kernel: 'transpose_tiled', grid: [1, 65535, 65535], block: [32, 8] });
  });

  it('gives matrices of at most 8 columns (else rows) a thread per W rows (columns), 16-byte accesses where the long dim allows', () => {
    // [524288, 2] f32: groups of 4 rows.
    expect(planTranspose(1, 524_288, 2, 4, true)).toEqual({ kind: 'narrow', kernel: 'transpose_narrow_cols_vec', grid: 512, block: 256 });
    // A long dim that is not a multiple of the width, or unaligned tensors: one row per thread.
    expect(planTranspose(1, 524_287, 2, 4, true)).toEqual({ kind: 'narrow', kernel: 'transpose_narrow_cols_scalar', grid: 2048, block: 256 });
    expect(planTranspose(1, 524_288, 2, 4, false).kernel).toBe('transpose_narrow_cols_scalar');
    // Few rows: groups of 8 f16 columns.
    expect(planTranspose(3, 8, 1000, 8, true)).toEqual({ kind: 'narrow', kernel: 'transpose_narrow_rows_vec', grid: 2, block: 256 });
    expect(planTranspose(3, 9, 1000, 8, true).kind).toBe('tiled');
    // Both short: the columns decide.
    expect(planTranspose(100_000, 5, 7, 4, true)).toEqual({ kind: 'narrow', kernel: 'transpose_narrow_cols_scalar', grid: 1954, block: 256 });
  });

  it('counts narrow groups in 32 bits: more than 2^31 take the tiles', () => {
    expect(planTranspose(1, 2 ** 31, 2, 4, false).kernel).toBe('transpose_narrow_cols_scalar');
    expect(planTranspose(2, 2 ** 31, 2, 4, false).kernel).toBe('transpose_tiled');
    expect(planTranspose(1, 2 ** 31, 2, 4, true)).toMatchObject({ kernel: 'transpose_narrow_cols_vec', grid: 2 ** 20 });
  });
});
