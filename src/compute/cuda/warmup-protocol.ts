/** The messages between a kernel warmup and its compile processes (warmup-pool.ts, warmup-worker.ts). */
import type { ModuleSpec } from '../gpu/kernel-sources.js';

/** What a compile process is started with (its one argument, as JSON). */
export interface WorkerData {
  /** The kernel cache folder compiled modules go to. */
  readonly cacheDir: string;
  /** The `kernels/` folder the sources are read from. */
  readonly kernelsDir: string;
  /** The device arch compiled for (see the NVRTC Program's `deviceArch`). */
  readonly deviceArch: string;
}

/** One module to compile. */
export interface WorkerJob {
  readonly id: number;
  readonly spec: ModuleSpec;
}

/** A worker's answers: ready for jobs, or the outcome of one job. */
export type WorkerReply =
  | { readonly ready: true }
  | { readonly id: number; readonly ok: true; readonly cacheHit: boolean; readonly ms: number; readonly ready?: undefined }
  | { readonly id: number; readonly ok: false; readonly errorName: string; readonly message: string; readonly ms: number; readonly ready?: undefined };
