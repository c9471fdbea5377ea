/**
 * Multi-process all-reduce through NCCL: this script starts one child process per rank on this
 * host, passing them the communicator's id in an environment variable; each child opens its GPU,
 * joins the communicator (ncclCommInitRank), all-reduces a tensor holding its rank + 1, and checks
 * that every element is the sum over the ranks, 1 + 2 + … + size. The parent prints each rank's
 * line and exits 1 if any rank failed.
 *
 *   npx tsx examples/nccl-multiprocess.ts [--ranks N] [--elements N]
 *
 * Default: one rank per CUDA device (NCCL takes each device once per communicator). The id is
 * made here with `NcclUniqueId.create()`: the process that makes it hosts the ranks' rendezvous,
 * so it stays alive until they have all joined. Across machines the same code runs with the id
 * carried by any channel (a shared file, a job scheduler's environment, a socket).
 *
 * Every child gets `NCCL_NVLS_ENABLE=0` (`ncclSafeEnv`): NVLink multicast stays off in every
 * process, since a multicast object left behind can take a shared host's GPUs out of service.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Communicator, GpuCompute } from '../src/compute/index.js';
import { Device } from '../src/driver/index.js';
import { ncclSafeEnv, NcclUniqueId } from '../src/nccl/index.js';

const ID_VAR = 'GPUCOMPUTE_NCCL_ID';
const RANK_VAR = 'GPUCOMPUTE_RANK';
const SIZE_VAR = 'GPUCOMPUTE_WORLD_SIZE';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} takes a positive integer, got ${process.argv[at + 1]}`);
  return value;
}

/** One rank: join, all-reduce, check. */
async function rank(): Promise<void> {
  const rank = Number(process.env[RANK_VAR]);
  const size = Number(process.env[SIZE_VAR]);
  const id = NcclUniqueId.fromBase64(process.env[ID_VAR]!);
  const elements = option('elements', 1 << 20);
  using gpu = await GpuCompute.create({ backend: 'cuda', device: rank % Device.count(), logLevel: 'warn' });
  const started = performance.now();
  using comm = await Communicator.join(gpu, { id, rank, size });
  const joined = performance.now();
  using x = gpu.full([elements], rank + 1);
  using sum = comm.allReduce(x);
  const values = await sum.toArray();
  const expected = (size * (size + 1)) / 2;
  const wrong = values.findIndex((v) => v !== expected);
  if (wrong >= 0) throw new Error(`rank ${rank}: element ${wrong} is ${values[wrong]}, expected ${expected}`);
  console.log(
    `rank ${rank}/${size} on ${gpu.info.deviceName} (cuda:${gpu.info.ordinal}): joined in ${(joined - started).toFixed(0)} ms, ` +
      `all-reduce of ${elements} f32 gives ${expected} everywhere (NCCL_NVLS_ENABLE=${process.env.NCCL_NVLS_ENABLE})`,
  );
}

/** The parent: make the id, start the ranks, wait for them. */
async function parent(): Promise<void> {
  const size = option('ranks', Math.max(1, Device.count()));
  const id = NcclUniqueId.create();
  const script = fileURLToPath(import.meta.url);
  const children = Array.from({ length: size }, (_, r) =>
    spawn(process.execPath, [...process.execArgv, script, ...process.argv.slice(2)], {
      env: ncclSafeEnv({ ...process.env, [ID_VAR]: id.toBase64(), [RANK_VAR]: String(r), [SIZE_VAR]: String(size) }),
      stdio: 'inherit',
    }),
  );
  const codes = await Promise.all(children.map((child) => new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)))));
  const failed = codes.filter((c) => c !== 0).length;
  console.log(failed === 0 ? `all ${size} ranks agree` : `${failed} of ${size} ranks failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

if (process.env[RANK_VAR] === undefined) await parent();
else await rank();
