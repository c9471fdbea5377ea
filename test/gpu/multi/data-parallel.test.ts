/**
 * DataParallel on CUDA, as test/unit/compute/data-parallel.test.ts checks it on the CPU: every
 * replica's gradients the same bit for bit and equal to f32 rounding to one GPU's over the whole
 * batch (an MLP and a GRU), AdamW steps keeping the replicas identical and on the single run's
 * path, buckets of one parameter, of all and in between, accumulation over two backwards, and
 * each bucket's all-reduce queued on the side streams before the last replica's backward has been
 * queued. On two GPUs through NCCL (ncclCommInitAll); on one GPU with two GpuComputes of the
 * device through the host transport; and one process per GPU (Communicator.join, the fixture
 * `fixtures/data-parallel-ranks.ts`): the parameters broadcast from rank 0, then trained alike.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Communicator } from '../../../src/compute/communicator.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import type { Tensor } from '../../../src/compute/tensor/tensor.js';
import { gradOf, host, makeBatch, mismatches, MLP, MODELS, pair, parallelBackward, rankLosses, singleBackward, trainBoth } from '../../unit/compute/data-parallel-cases.js';
import { freshSeed } from '../../unit/compute/helpers.js';
import { deviceCount, skipReason } from './multi-gpu.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The checks every transport gets: `setup` gives two GpuComputes, a communicator over them and a reference GpuCompute. */
function suite(setup: () => Promise<{ gpus: GpuCompute[]; comm: Communicator; ref: GpuCompute; dispose(): void }>, transport: 'nccl' | 'host'): void {
  let gpus: GpuCompute[];
  let comm: Communicator;
  let ref: GpuCompute;
  let release: () => void;
  beforeAll(async () => {
    ({ gpus, comm, ref, dispose: release } = await setup());
  });
  afterAll(() => release());

  it(`uses the ${transport} transport`, () => {
    expect(comm.transport).toBe(transport);
  });

  for (const model of MODELS) {
    it(`${model.name}: every replica gets the gradient of the mean loss over the global batch`, () => {
      const seed = freshSeed();
      const p = pair(comm, gpus[0]!, ref, model, seed);
      const batch = makeBatch(model, 16, seed + 7);
      parallelBackward(gpus, p.dp, model, batch);
      singleBackward(ref, model, p.refParams, batch);
      expect(mismatches(2, p.dp, p.refParams, gradOf), `seed ${seed}`).toEqual([]);
      p.dispose();
    });

    it(`${model.name}: AdamW steps keep the replicas identical and on the single run's path${model === MLP ? ', in steady memory' : ''}`, () => {
      const seed = freshSeed();
      const p = pair(comm, gpus[0]!, ref, model, seed);
      trainBoth(gpus, ref, model, p, 2, seed);
      const steady = gpus.map((g) => g.memoryStats().inUseBytes);
      trainBoth(gpus, ref, model, p, 3, seed + 1);
      // (The GRU's CUDA graphs, captured when a call comes back, hold pool memory of their own.)
      if (model === MLP) expect(gpus.map((g) => g.memoryStats().inUseBytes), 'nothing left behind by a step').toEqual(steady);
      expect(mismatches(2, p.dp, p.refParams, host), `after 5 steps (seed ${seed})`).toEqual([]);
      p.dispose();
    });
  }

  it('buckets of one parameter, of all and in between give the same gradients; two backwards accumulate', () => {
    const seed = freshSeed();
    const batches = [makeBatch(MLP, 8, seed), makeBatch(MLP, 8, seed + 1)];
    const results: number[][][] = [];
    for (const bucketBytes of [1, 100, 2 ** 40]) {
      const p = pair(comm, gpus[0]!, ref, MLP, seed, { bucketBytes });
      for (const batch of batches) {
        parallelBackward(gpus, p.dp, MLP, batch);
        singleBackward(ref, MLP, p.refParams, batch);
      }
      expect(mismatches(2, p.dp, p.refParams, gradOf), `bucketBytes ${bucketBytes} (seed ${seed})`).toEqual([]);
      results.push(p.dp.parameters(1).map(gradOf));
      p.dispose();
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it('each bucket is all-reduced on the side streams while the last replica still has backward work to queue', () => {
    const seed = freshSeed();
    const p = pair(comm, gpus[0]!, ref, MLP, seed, { bucketBytes: 1 });
    const losses = rankLosses(gpus, p.dp, MLP, makeBatch(MLP, 8, seed));
    const main = gpus.map((g) => g.currentStream());
    const last = gpus[1]!.backend as unknown as { matmul: (...args: unknown[]) => unknown };
    const matmul = last.matmul;
    let matmuls = 0;
    last.matmul = (...args: unknown[]) => {
      matmuls++;
      return matmul.apply(gpus[1]!.backend, args);
    };
    const allReduce = comm.allReduce.bind(comm) as (x: Tensor[], o: unknown) => Tensor[];
    const calls: { matmuls: number; onSide: boolean[] }[] = [];
    comm.allReduce = ((x: Tensor[], o: unknown) => {
      calls.push({ matmuls, onSide: gpus.map((g, r) => g.currentStream() !== main[r]) });
      return allReduce(x, o);
    }) as typeof comm.allReduce;
    try {
      p.dp.backward(losses);
    } finally {
      delete (comm as { allReduce?: unknown }).allReduce;
      last.matmul = matmul;
    }
    expect(calls, 'one all-reduce per parameter').toHaveLength(6);
    expect(calls.every((c) => c.onSide.every(Boolean)), 'queued on the side streams').toBe(true);
    expect(calls[0]!.matmuls, 'the first bucket before the last replica has queued its matmuls').toBeLessThan(matmuls);
    expect(gpus.map((g) => g.currentStream()), 'the main streams are current again').toEqual(main);
    singleBackward(ref, MLP, p.refParams, makeBatch(MLP, 8, seed));
    expect(mismatches(2, p.dp, p.refParams, gradOf), 'and the gradients are right').toEqual([]);
    for (const l of losses) l.dispose();
    p.dispose();
  });
}

const twoGpus = skipReason(2, true);
describe.skipIf(twoGpus !== '')(`DataParallel on two GPUs through NCCL ${twoGpus}`, () => {
  suite(async () => {
    const gpus = [await GpuCompute.create({ backend: 'cuda', device: 0, logLevel: 'silent' }), await GpuCompute.create({ backend: 'cuda', device: 1, logLevel: 'silent' })];
    const comm = await Communicator.create(gpus);
    return {
      gpus,
      comm,
      ref: gpus[0]!,
      dispose() {
        comm.dispose();
        for (const g of gpus) g.dispose();
      },
    };
  }, 'nccl');
});

const oneGpu = skipReason(1, false);
describe.skipIf(oneGpu !== '')(`DataParallel on one GPU, two GpuComputes of the device through the host transport ${oneGpu}`, () => {
  suite(async () => {
    const gpus = [await GpuCompute.create({ backend: 'cuda', device: 0, logLevel: 'silent' }), await GpuCompute.create({ backend: 'cuda', device: 0, logLevel: 'silent' })];
    const comm = await Communicator.create(gpus, { transport: 'host' });
    return {
      gpus,
      comm,
      ref: gpus[0]!,
      dispose() {
        comm.dispose();
        for (const g of gpus) g.dispose();
      },
    };
  }, 'host');
});

describe.skipIf(twoGpus !== '')(`DataParallel across processes, one per GPU ${twoGpus}`, () => {
  it(`starts every rank from rank 0's parameters and trains them alike (${Math.min(deviceCount, 4)} processes)`, () => {
    const ranks = Math.min(deviceCount, 4);
    const run = spawnSync(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'test', 'gpu', 'multi', 'fixtures', 'data-parallel-ranks.ts'), '--ranks', String(ranks)], {
      cwd: root,
      encoding: 'utf8',
      timeout: 240_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).toContain(`data-parallel over ${ranks} processes agrees`);
  });
});
