/**
 * A compile worker of a kernel warmup (a worker thread; NVRTC is thread-safe, and each worker
 * loads it through koffi on its own): compiles the module specs it is sent, one at a time, into
 * the kernel cache folder it was given, and answers each with its outcome (see warmup-pool.ts).
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { KernelCache } from '../../nvrtc/kernel-cache.js';
import { KernelSources } from '../gpu/kernel-sources.js';
import { compileKernelModule } from './kernel-compile.js';
import type { WorkerData, WorkerJob, WorkerReply } from './warmup-protocol.js';

const data = workerData as WorkerData;
const port = parentPort!;
// No memory layer to speak of: every entry goes to the folder, where the backend will look.
const cache = new KernelCache({ dir: data.cacheDir, memoryEntries: 1 });
const sources = new KernelSources(data.kernelsDir);

port.on('message', (job: WorkerJob) => {
  const started = performance.now();
  let reply: WorkerReply;
  try {
    const compiled = compileKernelModule(job.spec, sources, { deviceArch: data.deviceArch, cache });
    // A failed write leaves the cache in memory only: the module would be lost with this thread.
    reply =
      cache.mode === 'disk'
        ? { id: job.id, ok: true, cacheHit: compiled.cacheHit, ms: performance.now() - started }
        : { id: job.id, ok: false, errorName: 'KernelCache', message: cache.fallbackReason ?? `the kernel cache is ${cache.mode}`, ms: performance.now() - started };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    reply = { id: job.id, ok: false, errorName: error.name, message: error.message, ms: performance.now() - started };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies WorkerReply);
