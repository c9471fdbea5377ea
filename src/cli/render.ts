/**
 * Text rendering of an {@link InfoReport} for people: one block per registered backend
 * saying whether it is available and why not, then a table of devices.
 */
import type { BackendRegistration } from '../compute/backend/registration.js';
import { BACKENDS } from '../compute/backends.js';
import { bytes } from '../compute/core/units.js';
import type { InfoDevice, InfoReport } from './probe.js';

export { bytes } from '../compute/core/units.js';

/** The whole `gpucompute info` text, ending in a newline. */
export function renderInfo(report: InfoReport): string {
  const lines: string[] = [
    `gpucompute ${report.version} on ${report.host.platform}-${report.host.arch}, Node.js ${report.host.node}`,
    '',
    'Backends',
  ];
  for (const registration of BACKENDS) {
    const probe = report.backends[registration.kind];
    const { summary, details } = (registration as BackendRegistration).describe(probe);
    lines.push(`  ${registration.title.padEnd(6)} ${(probe.available ? 'available' : 'unavailable').padEnd(12)} ${summary}`);
    for (const detail of details) lines.push(`${' '.repeat(9)}${detail}`);
  }

  lines.push('', 'Devices');
  if (report.devices.length === 0) {
    lines.push('  none: no GPU answered');
  } else {
    lines.push(...renderDeviceTable(report.devices).map((l) => `  ${l}`));
    for (const d of report.devices) {
      if (d.error) lines.push(`  ${d.backend} ${d.ordinal}: some values could not be read: ${d.error}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The devices as an aligned text table (header, rule, one line per device). */
export function renderDeviceTable(devices: readonly InfoDevice[]): string[] {
  const header = [
    '#',
    'backend',
    'name',
    'arch',
    'CC',
    'SMs',
    'memory free / total',
    'smem/block (opt-in)',
    'L2',
    'tensor cores',
    'fp16',
    'bf16',
    'driver',
    'UUID',
  ];
  const rows = devices.map((d) => [
    String(d.ordinal),
    d.backend,
    d.name,
    d.arch ?? '—',
    d.computeCapability ?? '—',
    d.multiprocessorCount === null ? '—' : String(d.multiprocessorCount),
    d.memoryTotal === null ? '—' : `${d.memoryFree === null ? '—' : bytes(d.memoryFree)} / ${bytes(d.memoryTotal)}`,
    d.sharedMemoryPerBlock === null
      ? '—'
      : `${bytes(d.sharedMemoryPerBlock)}${d.sharedMemoryPerBlockOptin === null ? '' : ` (${bytes(d.sharedMemoryPerBlockOptin)})`}`,
    d.l2CacheSize === null ? '—' : bytes(d.l2CacheSize),
    yesNo(d.tensorCores),
    yesNo(d.fp16),
    yesNo(d.bf16),
    d.driverVersion ?? '—',
    d.uuid ?? '—',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

function yesNo(value: boolean | null): string {
  return value === null ? '—' : value ? 'yes' : 'no';
}
