/**
 * The matmul autotuner: for a product's class, the record of which kernel configuration (or
 * cuBLAS) ran fastest, read from the shared store or measured now on the real operands.
 */
import { CaptureError, GpuError } from '../../../errors.js';
import { AutotuneStore, problemClassKey, type AutotuneRecord } from '../../gpu/autotune.js';
import type { CudaContext } from '../cuda-context.js';
import { isConfigurationFailure } from '../configuration-failure.js';
import { cublasHandle, runCublas } from './cublas.js';
import { runVariant } from './launch.js';
import { configName, dynamicSharedBytes } from './matmul-kernels.js';
import { tuningCandidates, variantFor, type Resolved } from './product.js';
import { timeLaunches } from './timing.js';

/**
 * The tuning record for this product's class: read from the store, or measured now by timing
 * every candidate configuration (and cuBLAS, for engine 'auto') on the real operands with
 * events on the current stream, then stored. Candidates that fail to build or launch are skipped.
 * Each timed candidate is a `tune` progress event through the backend's logger.
 */
export function tuneMatmul(backend: CudaContext, r: Resolved): AutotuneRecord {
  const p = r.params;
  const store = AutotuneStore.shared();
  const key = problemClassKey({
    device: backend.device.name,
    dtype: r.dtype,
    precision: r.dtype === 'f32' ? p.precision : 'highest',
    transA: p.transA,
    transB: p.transB,
    m: p.m,
    n: p.n,
    k: p.k,
    batch: p.batch,
    alignA: r.alignA,
    alignB: r.alignB,
    vecC: r.vecC,
  });
  const cublas = p.engine === 'auto' ? cublasHandle(backend, false) : undefined;
  const known = store.get(key);
  if (known && (!cublas || known.cublasMs !== undefined)) return known;
  if (backend.capturing) {
    // Timing synchronises, which a capture cannot hold; gpu.capture's eager first run tunes every product it records.
    throw new CaptureError(`matmul: the product ${key} has no tuning record yet and cannot be timed while capturing`);
  }
  if (known) {
    // Tuned before with engine 'kernels' (or without cuBLAS): only cuBLAS is left to time.
    const cublasMs = timeLaunches(backend, () => runCublas(backend, cublas!, r));
    const record: AutotuneRecord = {
      ...known,
      choice: cublasMs < known.kernelMs ? 'cublas' : known.kernel,
      cublasMs,
      candidates: { ...known.candidates, cublas: cublasMs },
      measuredAt: new Date().toISOString(),
    };
    store.set(key, record);
    return record;
  }

  const times: Record<string, number> = {};
  let best: { name: string; ms: number } | undefined;
  const optin = backend.device.sharedMemoryPerBlockOptin;
  const candidates = tuningCandidates(r).filter((config) => dynamicSharedBytes(variantFor(r, config)) <= optin);
  // A candidate's first run compiles its module (NVRTC seconds on a cold cache): report each step.
  const step = progressSteps(backend, r, candidates.length + (cublas ? 1 : 0));
  for (const config of candidates) {
    const variant = variantFor(r, config);
    const name = configName(config);
    const started = performance.now();
    try {
      const ms = timeLaunches(backend, () => runVariant(backend, r, variant));
      times[name] = ms;
      if (!best || ms < best.ms) best = { name, ms };
      step(name, 'done', started);
    } catch (err) {
      if (!isConfigurationFailure(err)) throw err;
      step(name, 'failed', started);
      backend.logger?.debug(`matmul autotune: ${name} skipped: ${(err as Error).message}`);
    }
  }
  if (!best) throw new GpuError('UNSUPPORTED', `matmul: no kernel configuration runs for ${key}`);
  let cublasMs: number | undefined;
  if (cublas) {
    const started = performance.now();
    cublasMs = timeLaunches(backend, () => runCublas(backend, cublas, r));
    times.cublas = cublasMs;
    step('cublas', 'done', started);
  }
  const record: AutotuneRecord = {
    choice: cublasMs !== undefined && cublasMs < best.ms ? 'cublas' : best.name,
    kernel: best.name,
    kernelMs: best.ms,
    ...(cublasMs === undefined ? {} : { cublasMs }),
    candidates: times,
    measuredAt: new Date().toISOString(),
  };
  store.set(key, record);
  backend.logger?.debug(`matmul autotune ${key}: ${JSON.stringify(times)} → ${record.choice}`);
  return record;
}

/**
 * Reports each timed candidate of a tuning as a progress event (`tune 3/8 matmul f16
 * 4096x4096x4096 NT: mma128x128x32w2x2s4`), numbered out of `total`.
 */
function progressSteps(backend: CudaContext, r: Resolved, total: number): (name: string, outcome: 'done' | 'failed', started: number) => void {
  const logger = backend.logger;
  if (!logger) return () => {};
  const p = r.params;
  const kind = r.dtype === 'f32' && p.precision === 'tf32' ? 'tf32' : r.dtype;
  const problem = `matmul ${kind} ${p.m}x${p.n}x${p.k}${p.batch > 1 ? ` batch ${p.batch}` : ''} ${p.transA ? 'T' : 'N'}${p.transB ? 'T' : 'N'}`;
  let done = 0;
  return (name, outcome, started) => {
    logger.progress({ phase: 'tune', done: ++done, total, what: `${problem}: ${name}`, outcome, ms: performance.now() - started });
  };
}
