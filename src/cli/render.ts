/**
 * Text rendering of an {@link InfoReport} for people: one block per backend
 * saying whether it is available and why not, then a table of devices.
 */
import type { CallProbe, DeviceInfo, InfoReport, LibraryProbe, NvrtcProbe } from './probe.js';

/** The whole `gpucompute info` text, ending in a newline. */
export function renderInfo(report: InfoReport): string {
  const { cuda, hip, metal, cpu } = report.backends;
  const lines: string[] = [
    `gpucompute ${report.version} on ${report.host.platform}-${report.host.arch}, Node.js ${report.host.node}`,
    '',
    'Backends',
  ];
  const backend = (name: string, available: boolean, summary: string, details: string[]) => {
    lines.push(`  ${name.padEnd(6)} ${(available ? 'available' : 'unavailable').padEnd(12)} ${summary}`);
    for (const detail of details) lines.push(`${' '.repeat(9)}${detail}`);
  };

  const cudaDetails = [...libraryDetails('libcuda', cuda.library), ...callDetails(cuda.init), nvrtcLine(cuda.nvrtc)];
  if (cuda.nvrtc.library.tried.length > 0 && !cuda.nvrtc.library.found) cudaDetails.push(...triedLines(cuda.nvrtc.library, '  '));
  const cudaVersions = [
    cuda.displayDriverVersion && `driver ${cuda.displayDriverVersion}`,
    cuda.driverVersion && `CUDA ${cuda.driverVersion}`,
  ].filter(Boolean);
  const cudaSummary = cuda.available
    ? `${plural(cuda.deviceCount ?? 0, 'device')}, ${cudaVersions.join(', ')}`
    : `${cuda.reason ?? 'unknown reason'}${cudaVersions.length ? ` (${cudaVersions.join(', ')})` : ''}`;
  backend('CUDA', cuda.available, cudaSummary, cudaDetails);

  const hipDetails = [...libraryDetails('libamdhip64', hip.library)];
  if (hip.runtimeVersion) hipDetails.push(`HIP runtime ${hip.runtimeVersion}`);
  backend('HIP', hip.available, hip.available ? plural(hip.deviceCount ?? 0, 'device') : (hip.reason ?? 'unknown reason'), hipDetails);

  backend('Metal', metal.available, metal.reason ?? '', []);
  backend('CPU', cpu.available, `${plural(cpu.cores, 'core')}, ${cpu.model}, ${bytes(cpu.memoryTotal)} memory (${bytes(cpu.memoryFree)} free)`, []);

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
export function renderDeviceTable(devices: readonly DeviceInfo[]): string[] {
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

function libraryDetails(label: string, library: LibraryProbe): string[] {
  if (library.found) return [`${label} loaded from ${library.path}`];
  return [`${label} tried:`, ...triedLines(library, '')];
}

function triedLines(library: LibraryProbe, indent: string): string[] {
  return library.tried.map((t) => `${indent}  ${t.path}: ${t.error}`);
}

function callDetails(call: CallProbe | null): string[] {
  if (!call || call.ok) return [];
  return [`${call.call} returned ${call.name} (${call.code})${call.description ? `: ${call.description}` : ''}`];
}

function nvrtcLine(nvrtc: NvrtcProbe): string {
  if (!nvrtc.available) return `NVRTC unavailable: ${nvrtc.reason ?? 'unknown reason'}`;
  const archs = nvrtc.supportedArchs;
  const range = archs.length === 0 ? 'no targets' : `targets ${archs[0]} to ${archs[archs.length - 1]} (${archs.length})`;
  return `NVRTC ${nvrtc.version} loaded from ${nvrtc.library.path}, ${range}`;
}

function yesNo(value: boolean | null): string {
  return value === null ? '—' : value ? 'yes' : 'no';
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Bytes in binary units, without decimals when exact: `48 KiB`, `79.6 GiB`. */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}
