/**
 * The autotuner's memory: which kernel configuration (or cuBLAS) was measured fastest for a
 * class of problems on a device, kept in `autotune.json` beside the kernel cache
 * (`<kernel cache dir>/../autotune.json`) so a process pays the timing once per machine.
 *
 * Writes are atomic (a temporary file in the same folder, then a rename) and merge with what
 * other processes wrote meanwhile, so concurrent processes lose nothing but a tie. A missing,
 * unreadable or corrupted file reads as empty; a folder that cannot be written keeps the
 * records in memory only, as does a disabled kernel cache (`GPUCOMPUTE_CACHE=0`).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KernelCache } from '../../nvrtc/kernel-cache.js';

/** What was measured for one problem class. Times are median milliseconds per product. */
export interface AutotuneRecord {
  /** The winner: a kernel configuration name (see `configName`) or `'cublas'`. */
  readonly choice: string;
  /** The fastest of our kernel configurations, and its time. */
  readonly kernel: string;
  readonly kernelMs: number;
  /** cuBLAS's time, when it was available and measured. */
  readonly cublasMs?: number;
  /** Every candidate's time. */
  readonly candidates: Readonly<Record<string, number>>;
  /** ISO date of the measurement. */
  readonly measuredAt: string;
}

/**
 * Raised whenever the kernels' relative speeds change, so that choices measured on the old
 * kernels are dropped and tuned again (2: the reworked SIMT and mma.sync pipelines).
 */
const FILE_VERSION = 2;

interface AutotuneFile {
  version: number;
  records: Record<string, AutotuneRecord>;
}

/** Records by problem-class key, in memory and (when possible) on disk. */
export class AutotuneStore {
  /** The JSON file, or undefined when records stay in memory. */
  readonly path: string | undefined;
  readonly #records = new Map<string, AutotuneRecord>();
  #writable: boolean;

  /** @param path - the JSON file; undefined keeps records in memory only. */
  constructor(path: string | undefined) {
    this.path = path;
    this.#writable = path !== undefined;
    if (path !== undefined) for (const [key, record] of Object.entries(readRecords(path))) this.#records.set(key, record);
  }

  static #shared: AutotuneStore | undefined;

  /** The process-wide store beside the shared kernel cache (memory-only when that cache is not on disk). */
  static shared(): AutotuneStore {
    if (!AutotuneStore.#shared) {
      const cache = KernelCache.shared();
      AutotuneStore.#shared = new AutotuneStore(cache.mode === 'disk' ? join(dirname(cache.dir), 'autotune.json') : undefined);
    }
    return AutotuneStore.#shared;
  }

  /** Whether records reach the disk (false after a failed write). */
  get persistent(): boolean {
    return this.#writable;
  }

  get(key: string): AutotuneRecord | undefined {
    return this.#records.get(key);
  }

  /** Keeps `record` for `key` and writes the file (merged with its current content). */
  set(key: string, record: AutotuneRecord): void {
    this.#records.set(key, record);
    if (!this.#writable || this.path === undefined) return;
    const path = this.path;
    const merged: AutotuneFile = { version: FILE_VERSION, records: { ...readRecords(path), [key]: record } };
    const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(temp, `${JSON.stringify(merged, null, 1)}\n`);
      renameSync(temp, path);
      for (const [k, r] of Object.entries(merged.records)) if (!this.#records.has(k)) this.#records.set(k, r);
    } catch {
      // A read-only or full disk: keep tuning results for this process only.
      this.#writable = false;
      try {
        rmSync(temp, { force: true });
      } catch {
        // The folder itself is unusable: there is no temporary file to remove.
      }
    }
  }

  /** Every record held, by key. */
  entries(): [string, AutotuneRecord][] {
    return [...this.#records.entries()];
  }
}

/** The records of the file at `path`; empty when it is missing or not a file this version wrote. */
function readRecords(path: string): Record<string, AutotuneRecord> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = JSON.parse(text) as Partial<AutotuneFile>;
    if (parsed.version !== FILE_VERSION || typeof parsed.records !== 'object' || parsed.records === null) return {};
    const records: Record<string, AutotuneRecord> = {};
    for (const [key, r] of Object.entries(parsed.records)) if (isRecord(r)) records[key] = r;
    return records;
  } catch {
    return {};
  }
}

function isRecord(r: unknown): r is AutotuneRecord {
  if (typeof r !== 'object' || r === null) return false;
  const x = r as Record<string, unknown>;
  return (
    typeof x.choice === 'string' &&
    typeof x.kernel === 'string' &&
    typeof x.kernelMs === 'number' &&
    (x.cublasMs === undefined || typeof x.cublasMs === 'number') &&
    typeof x.candidates === 'object' &&
    x.candidates !== null &&
    typeof x.measuredAt === 'string'
  );
}

/**
 * The problem class a product belongs to for tuning: each extent rounded up to a power of
 * two (products within a factor of two behave alike), plus everything that selects a
 * different kernel (dtype, precision, transposes, alignment) and the device.
 */
export function problemClassKey(p: {
  device: string;
  dtype: string;
  precision: string;
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  batch: number;
  alignA: boolean;
  alignB: boolean;
  vecC: boolean;
}): string {
  return (
    `${p.device}|${p.dtype}|${p.precision}|t${bit(p.transA)}${bit(p.transB)}|a${bit(p.alignA)}${bit(p.alignB)}${bit(p.vecC)}|` +
    `m${bucket(p.m)}n${bucket(p.n)}k${bucket(p.k)}b${bucket(p.batch)}`
  );
}

/** The power-of-two bucket of a dim: products within one bucket share a tuning record. */
function bucket(x: number): number {
  return x <= 1 ? 0 : Math.ceil(Math.log2(x));
}

function bit(b: boolean): string {
  return b ? '1' : '0';
}
