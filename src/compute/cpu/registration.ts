/** The CPU backend's registration: always available, every op, the reference meaning. */
import { availableParallelism, cpus, freemem, totalmem } from 'node:os';
import { BackendUnavailableError, plural, type BackendProbe, type BackendRegistration } from '../backend/registration.js';
import { CpuBackend } from './cpu-backend.js';
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
}

/** The CPU: its model, cores and memory. */
export function probeCpu(): CpuProbe {
  return {
    available: true,
    reason: null,
    model: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryTotal: totalmem(),
    memoryFree: freemem(),
  };
}

export const cpuRegistration: BackendRegistration<'cpu', CpuProbe> = {
  kind: 'cpu',
  title: 'CPU',
  hostDevice: true,
  unsupported: CPU_UNSUPPORTED,
  probe: () => ({ backend: probeCpu(), devices: [{ info: new CpuBackend().info() }] }),
  describe: (cpu) => ({
    summary: `${plural(cpu.cores, 'core')}, ${cpu.model}, ${bytes(cpu.memoryTotal)} memory (${bytes(cpu.memoryFree)} free)`,
    details: [],
  }),
  async open({ device, poolLimitBytes }) {
    if (device !== 0) throw new BackendUnavailableError('cpu', `the CPU backend has one device (0), not device ${device}`);
    return new CpuBackend(poolLimitBytes === undefined ? {} : { poolLimitBytes });
  },
};
