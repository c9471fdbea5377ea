/** The CPU backend's registration: always available, every op, the reference meaning. */
import { availableParallelism, cpus, freemem, totalmem } from 'node:os';
import { BackendUnavailableError, plural, type BackendProbe, type BackendRegistration } from '../backend/registration.js';
import { probeBlas, type BlasProbe } from '../../blas/probe.js';
import { blasEnabled } from './blas-matmul.js';
import { CpuBackend, cpuDeviceInfo } from './cpu-backend.js';
import { describeEngine, type CpuEngine } from './cpu-engine.js';
import { threadCount } from './simd/runtime.js';
import { defaultSimdVariant } from './simd/wasm-module.js';
import { CPU_UNSUPPORTED } from './support.js';
import { bytes } from '../core/units.js';

/** The CPU backend's resources. */
export interface CpuProbe extends BackendProbe {
  available: true;
  reason: null;
  model: string;
  /** Logical cores the process may use. */
  cores: number;
  memoryTotal: number;
  memoryFree: number;
  /** The BLAS that runs the products (GPUCOMPUTE_BLAS=0 switches it off). */
  blas: BlasProbe & { enabled: boolean };
  /**
   * What computes with the default options (the environment's thread count and build); null when
   * the environment sets one the backend refuses (`engineError` says which).
   */
  engine: CpuEngine | null;
  engineError: string | null;
}

/** The CPU: its model, cores and memory. */
export function probeCpu(): CpuProbe {
  const blas = { ...probeBlas(), enabled: blasEnabled() };
  let engine: CpuEngine | null = null;
  let engineError: string | null = null;
  try {
    engine = { products: blas.enabled && blas.vendor ? blas.vendor : 'wasm', simd: defaultSimdVariant(), threads: threadCount() };
  } catch (err) {
    engineError = err instanceof Error ? err.message : String(err);
  }
  return {
    available: true,
    reason: null,
    model: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryTotal: totalmem(),
    memoryFree: freemem(),
    blas,
    engine,
    engineError,
  };
}

export const cpuRegistration: BackendRegistration<'cpu', CpuProbe> = {
  kind: 'cpu',
  title: 'CPU',
  hostDevice: true,
  unsupported: CPU_UNSUPPORTED,
  probe: async () => ({ backend: probeCpu(), devices: [{ info: cpuDeviceInfo() }] }),
  describe: (cpu) => ({
    summary: `${plural(cpu.cores, 'core')}, ${cpu.model}, ${bytes(cpu.memoryTotal)} memory (${bytes(cpu.memoryFree)} free)`,
    details: [cpu.engine ? `computes with ${describeEngine(cpu.engine)}` : `cannot open: ${cpu.engineError}`, blasLine(cpu.blas)],
  }),
  async open({ device, poolLimitBytes, threads, logger }) {
    if (device !== 0) throw new BackendUnavailableError('cpu', `the CPU backend has one device (0), not device ${device}`);
    return new CpuBackend({ logger, ...(poolLimitBytes === undefined ? {} : { poolLimitBytes }), ...(threads === undefined ? {} : { threads }) });
  },
};

function blasLine(blas: CpuProbe['blas']): string {
  if (!blas.found) return `products on the WebAssembly sgemm: ${blas.reason ?? 'no BLAS'} (set GPUCOMPUTE_LIBBLAS to a library's path)`;
  const what = `${blas.vendor}${blas.version ? ` ${blas.version}` : ''} from ${blas.path}`;
  return blas.enabled ? `products through ${what}, ${blas.threads ?? '?'} threads` : `BLAS ${what} switched off (GPUCOMPUTE_BLAS=0)`;
}
