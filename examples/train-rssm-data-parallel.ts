/**
 * Trains the RSSM ensemble of `train-rssm.ts` data-parallel over several GPUs of this machine
 * (DataParallel over a Communicator: NCCL between CUDA devices), each GPU taking an equal share of
 * every global batch, and trains the same model on one GPU with the whole global batch, from the
 * same initial weights and the same batches. Prints both loss curves side by side and exits 1
 * unless they agree (to f32 rounding, which AdamW's steps carry along) and the loss falls 10x.
 *
 * Run: `npx tsx examples/train-rssm-data-parallel.ts [--gpus N] [--steps N] [--batch GLOBAL]`;
 * `--backend cpu` runs the ranks as CPU GpuComputes over the host transport instead.
 */
import { performance } from 'node:perf_hooks';
import { AdamW, Communicator, DataParallel, Device, GpuCompute, type Tensor } from '../src/index.js';
import { batch, initParameters, loss, OBS, type RssmParameters } from './rssm-model.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const backend = arg('backend', 'cuda') as 'cuda' | 'cpu';
const RANKS = Number(arg('gpus', backend === 'cuda' ? String(Math.max(Device.count(), 1)) : '2'));
const STEPS = Number(arg('steps', '100'));
const GLOBAL = Number(arg('batch', '64'));
const SEQ = 16;
if (GLOBAL % RANKS !== 0) throw new Error(`the global batch ${GLOBAL} must split evenly over ${RANKS} ranks`);
const SHARD = GLOBAL / RANKS;

const open = (device: number) => GpuCompute.create({ backend, ...(backend === 'cuda' ? { device } : {}), logLevel: 'warn' });
const gpus = await Promise.all(Array.from({ length: RANKS }, (_, r) => open(r)));
const single = await open(0);
const comm = await Communicator.create(gpus);
console.log(`${RANKS} ranks (${gpus.map((g) => g.info.deviceName).join(', ')}) over ${comm.transport}; the reference on one ${single.info.deviceName}`);

/** The model's parameters as `initParameters` names them, over a list in its order. */
const named = (list: Tensor[]): RssmParameters => {
  const [encoderWeight, encoderBias, wIh, wHh, bIh, bHh, headWeight, headBias] = list as [Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor];
  return { encoderWeight, encoderBias, wIh, wHh, bIh, bHh, headWeight, headBias };
};

// The same initial weights for both runs: DataParallel replicates rank 0's to the other ranks.
const reference = initParameters(single, 1);
const dp = new DataParallel(comm, Object.values(initParameters(gpus[0]!, 1)));
const replicas = gpus.map((_, r) => named(dp.parameters(r)));
const optimizers = replicas.map((p) => new AdamW(Object.values(p), { lr: 3e-3, weightDecay: 0 }));
const referenceOptimizer = new AdamW(Object.values(reference), { lr: 3e-3, weightDecay: 0 });

const parallelLosses: number[] = [];
const singleLosses: number[] = [];
const parallelMs: number[] = [];
for (let step = 0; step < STEPS; step++) {
  const data = batch(GLOBAL, SEQ, 1000 + step);
  const rows = SHARD * SEQ * OBS;
  // Data parallel: each rank's loss is the mean over its shard; DataParallel averages the gradients.
  for (const g of gpus) g.synchronize();
  const start = performance.now();
  const shardLosses = gpus.map((g, r) =>
    g.scope(() => {
      const inputs = g.tensor(data.inputs.subarray(r * rows, (r + 1) * rows), [SHARD, SEQ, OBS]);
      const targets = g.tensor(data.targets.subarray(r * rows, (r + 1) * rows), [SHARD, SEQ, OBS]);
      return g.keep(loss(g, replicas[r]!, inputs, targets));
    }),
  );
  dp.backward(shardLosses);
  for (const o of optimizers) {
    o.step();
    o.zeroGrad();
  }
  const values = shardLosses.map((l) => l.toArraySync()[0]!);
  parallelMs.push(performance.now() - start);
  for (const l of shardLosses) l.dispose();
  parallelLosses.push(values.reduce((a, b) => a + b, 0) / RANKS);

  // The reference: the whole global batch on one device.
  singleLosses.push(
    single.scope(() => {
      const l = loss(single, reference, single.tensor(data.inputs, [GLOBAL, SEQ, OBS]), single.tensor(data.targets, [GLOBAL, SEQ, OBS]));
      l.backward();
      referenceOptimizer.step();
      referenceOptimizer.zeroGrad();
      return l.toArraySync()[0]!;
    }),
  );
}

console.log(`\nstep   ${RANKS} ranks, ${SHARD} each   1 device, ${GLOBAL}   relative difference`);
let worst = 0;
for (let s = 0; s < STEPS; s++) {
  const diff = Math.abs(parallelLosses[s]! - singleLosses[s]!) / Math.abs(singleLosses[s]!);
  worst = Math.max(worst, diff);
  if (s < 3 || s % 10 === 0 || s === STEPS - 1) console.log(`${String(s).padStart(4)}   ${parallelLosses[s]!.toExponential(4).padStart(14)}   ${singleLosses[s]!.toExponential(4).padStart(14)}   ${diff.toExponential(1)}`);
}
const fall = parallelLosses[0]! / (parallelLosses.slice(-10).reduce((a, b) => a + b, 0) / Math.min(10, STEPS));
const steady = parallelMs.slice(Math.min(10, STEPS - 1)).sort((a, b) => a - b);
console.log(`\nlargest relative difference ${worst.toExponential(2)}; the loss fell ${fall.toFixed(1)}x; a data-parallel step ${steady[steady.length >> 1]!.toFixed(2)} ms (median)`);

for (const o of [...optimizers, referenceOptimizer]) o.dispose();
dp.dispose();
for (const t of Object.values(reference)) t.dispose();
comm.dispose();
for (const g of [...gpus, single]) g.dispose();
// f32 sums in another order (shards, then the average) differ in the last bits; AdamW carries that along.
if (!(worst <= 1e-3)) {
  console.error(`the data-parallel losses differ from the single-device ones by up to ${worst.toExponential(2)} (1e-3 allowed)`);
  process.exit(1);
}
if (!(fall >= 10)) {
  console.error(`the loss fell only ${fall.toFixed(1)}x (at least 10x expected)`);
  process.exit(1);
}
