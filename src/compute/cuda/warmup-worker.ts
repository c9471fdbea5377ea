/**
 * A compile process of a kernel warmup (see warmup-pool.ts): compiles the module specs it is
 * sent, one at a time, into the kernel cache folder it was started with (its one argument, the
 * JSON of a WorkerData), and answers each with its outcome. It exits once its channel closes.
 */
import { performance } from 'node:perf_hooks';
import { KernelCache } from '../../nvrtc/kernel-cache.js';
import { KernelSources } from '../gpu/kernel-sources.js';
import { compileKernelModule } from './kernel-compile.js';
import type { WorkerData, WorkerJob, WorkerReply } from './warmup-protocol.js';

const data = JSON.parse(process.argv[2]!) as WorkerData;
const reply = (message: WorkerReply) => process.send!(message);
// No memory layer to speak of: every entry goes to the folder, where the backend will look.
const cache = new KernelCache({ dir: data.cacheDir, memoryEntries: 1 });
const sources = new KernelSources(data.kernelsDir);

process.on('message', (job: WorkerJob) => {
  const started = performance.now();
  try {
    const compiled = compileKernelModule(job.spec, sources, { deviceArch: data.deviceArch, cache });
    // A failed write leaves the cache in memory only: the module would be lost with this process.
    reply(
      cache.mode === 'disk'
        ? { id: job.id, ok: true, cacheHit: compiled.cacheHit, ms: performance.now() - started }
        : { id: job.id, ok: false, errorName: 'KernelCache', message: cache.fallbackReason ?? `the kernel cache is ${cache.mode}`, ms: performance.now() - started },
    );
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    reply({ id: job.id, ok: false, errorName: error.name, message: error.message, ms: performance.now() - started });
  }
});
process.on('disconnect', () => process.exit(0));
reply({ ready: true });
