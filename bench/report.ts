/**
 * Shared benchmark reporting: a markdown table on stdout, a JSON record and a
 * hand-written SVG chart under `bench/results/`, plus the small helpers every
 * bench needs (median, anchor scripts in Python, number formatting).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { probeCuda } from '../src/compute/cuda/probe.js';

/** Unit of a measurement. Throughputs are higher-is-better, times (`us`, `ms`) lower-is-better. */
export type BenchUnit = 'GB/s' | 'TFLOP/s' | 'us' | 'ms';

/** One measured configuration, ours next to its anchor. */
export interface BenchRow {
  /** Operation, e.g. "vector_add" or "launch empty". */
  op: string;
  /** Element type or variant, e.g. "f32". */
  dtype: string;
  /** Problem size: a number (elements, bytes, N...) plots on a log-2 axis; a string is a category. */
  size: number | string;
  unit: BenchUnit;
  /** Our figure, in `unit`. */
  ours: number;
  /** The anchor's figure (PyTorch, CuPy, cuBLAS, C...), in `unit`. */
  anchor?: number;
  /** Who the anchor is. */
  anchorName?: string;
  /** ours / anchor; computed when absent and both are known. Above 1 is better for throughputs, worse for times. */
  ratio?: number;
  /** The hardware roof in `unit` (e.g. device copy bandwidth), for "% of roof". */
  roof?: number;
  note?: string;
}

/** Where and with what context a report is written. */
export interface ReportOptions {
  /** Output folder; defaults to `bench/results` next to this file. */
  dir?: string;
  /** Extra facts for the JSON (device name, driver version...); merged over the defaults. */
  meta?: Record<string, unknown>;
}

/** Paths and text of a written report. */
export interface WrittenReport {
  markdown: string;
  jsonPath: string;
  svgPath: string;
}

const benchDir = dirname(fileURLToPath(import.meta.url));
const defaultResultsDir = join(benchDir, 'results');

/**
 * Prints `rows` as a markdown table and writes `<dir>/<name>.json` (rows and
 * meta) and `<dir>/<name>.svg` (throughput or time against size, one series
 * per op and dtype, ours solid and the anchor dashed).
 */
export function writeReport(name: string, rows: BenchRow[], opts: ReportOptions = {}): WrittenReport {
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new Error(`report name must be a plain file name, got ${JSON.stringify(name)}`);
  const completed = rows.map(withRatio);
  const markdown = renderMarkdown(completed);
  console.log(`\n## ${name}\n\n${markdown}`);
  const dir = resolve(opts.dir ?? defaultResultsDir);
  mkdirSync(dir, { recursive: true });
  const jsonPath = join(dir, `${name}.json`);
  const svgPath = join(dir, `${name}.svg`);
  const meta = { ...environmentMeta(), ...opts.meta };
  writeFileSync(jsonPath, `${JSON.stringify({ name, meta, rows: completed }, null, 2)}\n`);
  writeFileSync(svgPath, renderSvg(name, completed));
  console.log(`\nwrote ${jsonPath}\nwrote ${svgPath}`);
  return { markdown, jsonPath, svgPath };
}

function withRatio(row: BenchRow): BenchRow {
  if (row.ratio !== undefined || row.anchor === undefined || !(row.anchor > 0)) return row;
  return { ...row, ratio: row.ours / row.anchor };
}

function environmentMeta(): Record<string, unknown> {
  return {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    host: hostname(),
    cpu: cpus()[0]?.model ?? 'unknown',
    ...cudaMeta(),
  };
}

/** The GPUs and driver the figures were taken on, when CUDA answers. */
function cudaMeta(): Record<string, unknown> {
  const { backend, devices } = probeCuda({ freeMemory: false });
  if (!backend.library.found) return {};
  return {
    gpus: devices.map((d) => d.info?.deviceName ?? 'unknown'),
    cudaDriver: backend.driverVersion,
    nvidiaDriver: backend.displayDriverVersion,
    nvrtc: backend.nvrtc.version,
  };
}

/**
 * How to run a TypeScript file in a child process: this checkout's tsx under
 * the running Node (the GPU machines have no `npx`), else `tsx` from PATH.
 */
export function tsxCommand(script: string, args: readonly string[] = []): { command: string; args: string[] } {
  const cli = join(benchDir, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');
  return existsSync(cli) ? { command: process.execPath, args: [cli, script, ...args] } : { command: 'tsx', args: [script, ...args] };
}

/** The markdown table of `rows`: op, dtype, size, ours, anchor, ratio, % of roof, note. */
export function renderMarkdown(rows: readonly BenchRow[]): string {
  const header = ['op', 'dtype', 'size', 'ours', 'anchor', 'ratio', '% of roof', 'note'];
  const body = rows.map((r) => {
    const ratio = r.ratio ?? (r.anchor !== undefined && r.anchor > 0 ? r.ours / r.anchor : undefined);
    return [
      r.op,
      r.dtype,
      formatSize(r.size),
      formatRate(r.ours, r.unit),
      r.anchor === undefined ? '—' : `${formatRate(r.anchor, r.unit)}${r.anchorName ? ` (${r.anchorName})` : ''}`,
      ratio === undefined ? '—' : `${ratio.toFixed(2)}x`,
      r.roof !== undefined && r.roof > 0 ? `${((100 * r.ours) / r.roof).toFixed(1)}%` : '—',
      r.note ?? '',
    ];
  });
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n');
}

/** A size as `2^k` when it is an exact power of two of at least 1024, else as given. */
function formatSize(size: number | string): string {
  if (typeof size === 'string') return size;
  return size >= 1024 && Number.isInteger(Math.log2(size)) ? `2^${Math.log2(size)}` : String(size);
}

/** `value unit` with three significant figures (more for large integers). */
export function formatRate(value: number, unit: string): string {
  return `${formatNumber(value)} ${unit}`;
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return '0';
  return value.toPrecision(3);
}

/** Bytes in binary units: `512 B`, `1.5 KiB`, `16.0 MiB`, `80.0 GiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Median of a non-empty list (mean of the middle two for even lengths). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of an empty list');
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Runs an anchor script with `python3` (or `$GPUCOMPUTE_PYTHON`) and returns
 * the last line of its stdout that parses as JSON. Returns `undefined`, after
 * printing why, when Python is missing, a module it imports (torch, cupy) is
 * missing, it fails, or it runs past `timeoutMs`: benches then go on without
 * that anchor.
 */
export function runPython(script: string, args: readonly string[] = [], timeoutMs = 120_000): unknown {
  const python = process.env.GPUCOMPUTE_PYTHON || 'python3';
  const result = spawnSync(python, [script, ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 2 ** 20,
  });
  const label = `anchor ${script.split('/').pop()}`;
  if (result.error) {
    const err = result.error as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? `${python} not found` : err.code === 'ETIMEDOUT' ? `timed out after ${timeoutMs} ms` : err.message;
    console.log(`note: ${label} skipped: ${why}`);
    return undefined;
  }
  if (result.status !== 0) {
    const stderr = result.stderr.trim();
    const missing = /ModuleNotFoundError: No module named '([^']+)'/.exec(stderr);
    const why = missing
      ? `python module ${missing[1]} is not installed`
      : `exit ${result.status ?? result.signal}: ${stderr.split('\n').slice(-3).join(' / ')}`;
    console.log(`note: ${label} skipped: ${why}`);
    return undefined;
  }
  const lines = result.stdout.trim().split('\n').reverse();
  for (const line of lines) {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      // Not JSON: earlier lines are the script's own chatter.
    }
  }
  console.log(`note: ${label} skipped: printed no JSON line`);
  return undefined;
}

// ---------------------------------------------------------------- SVG chart

interface Series {
  label: string;
  unit: BenchUnit;
  ours: Point[];
  anchor: Point[];
  anchorName: string | undefined;
}

interface Point {
  size: number | string;
  value: number;
}

const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const plotWidth = 460;
const minPanelHeight = 340;
const legendLineHeight = 16;
/** Average width of a 12 px sans-serif character, to size the legend column. */
const charWidth = 6.8;
const margin = { left: 78, top: 44, bottom: 56, legendGap: 16 };

/**
 * An SVG chart of `rows`: one panel per unit, one series per (op, dtype).
 * Numeric sizes go on a log-2 x axis and are joined into lines (ours solid,
 * the anchor dashed); string sizes are categories, shown as markers (ours
 * filled, the anchor hollow on a dashed tick). The y axis is linear from zero,
 * or log-10 when values span more than 100x. Every panel has a legend.
 */
export function renderSvg(title: string, rows: readonly BenchRow[]): string {
  const units = [...new Set(rows.map((r) => r.unit))];
  const panels = units.map((unit) => {
    const panelRows = rows.filter((r) => r.unit === unit);
    const series = groupSeries(panelRows);
    return { unit, rows: panelRows, series, height: panelHeight(series) };
  });
  const legendChars = Math.max(10, ...panels.flatMap((p) => p.series.flatMap(legendLabels)).map((l) => l.length));
  const width = Math.ceil(margin.left + plotWidth + margin.legendGap + 30 + legendChars * charWidth + 10);
  const height = panels.reduce((sum, p) => sum + p.height, 0) + 10 || 60;
  const parts: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
  if (panels.length === 0) {
    parts.push(`<text x="${width / 2}" y="30" text-anchor="middle">${escapeXml(title)}: no rows</text>`);
  }
  let top = 0;
  for (const panel of panels) {
    parts.push(renderPanel(`${title} (${panel.unit})`, panel, top));
    top += panel.height;
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function legendLabels(s: Series): string[] {
  return s.anchor.length > 0 ? [`${s.label} (ours)`, `${s.label} (${s.anchorName ?? 'anchor'})`] : [`${s.label} (ours)`];
}

/** Tall enough for the plot and for the panel's legend. */
function panelHeight(series: readonly Series[]): number {
  const legend = series.reduce((h, s) => h + legendLabels(s).length * legendLineHeight + 4, 0);
  return Math.max(minPanelHeight, margin.top + legend + 20);
}

function renderPanel(title: string, panel: { unit: BenchUnit; rows: readonly BenchRow[]; series: readonly Series[]; height: number }, top: number): string {
  const { unit, rows, series } = panel;
  const plot = {
    x0: margin.left,
    x1: margin.left + plotWidth,
    y0: top + panel.height - margin.bottom,
    y1: top + margin.top,
  };
  const xAxis = makeXAxis(rows);
  const values = rows.flatMap((r) => (r.anchor === undefined ? [r.ours] : [r.ours, r.anchor])).filter((v) => Number.isFinite(v));
  const yAxis = makeYAxis(values);
  const px = (size: number | string) => plot.x0 + xAxis.position(size) * (plot.x1 - plot.x0);
  const py = (value: number) => plot.y0 - yAxis.position(value) * (plot.y0 - plot.y1);
  const out: string[] = [`<g class="panel" data-unit="${escapeXml(unit)}">`];
  out.push(`<text x="${(plot.x0 + plot.x1) / 2}" y="${top + 22}" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(title)}</text>`);
  // Grid and ticks.
  for (const tick of yAxis.ticks) {
    const y = round(py(tick));
    out.push(`<line class="grid" x1="${plot.x0}" y1="${y}" x2="${plot.x1}" y2="${y}" stroke="#e0e0e0"/>`);
    out.push(`<text x="${plot.x0 - 6}" y="${y + 4}" text-anchor="end">${escapeXml(formatTick(tick))}</text>`);
  }
  for (const tick of xAxis.ticks) {
    const x = round(px(tick.at));
    out.push(`<line class="grid" x1="${x}" y1="${plot.y0}" x2="${x}" y2="${plot.y1}" stroke="#f0f0f0"/>`);
    out.push(`<text x="${x}" y="${plot.y0 + 16}" text-anchor="middle">${escapeXml(tick.label)}</text>`);
  }
  out.push(`<line class="axis x-axis" x1="${plot.x0}" y1="${plot.y0}" x2="${plot.x1}" y2="${plot.y0}" stroke="#000"/>`);
  out.push(`<line class="axis y-axis" x1="${plot.x0}" y1="${plot.y0}" x2="${plot.x0}" y2="${plot.y1}" stroke="#000"/>`);
  out.push(`<text class="axis-label" x="${(plot.x0 + plot.x1) / 2}" y="${plot.y0 + 40}" text-anchor="middle">${escapeXml(xAxis.label)}</text>`);
  const yMid = (plot.y0 + plot.y1) / 2;
  out.push(`<text class="axis-label" x="18" y="${yMid}" text-anchor="middle" transform="rotate(-90 18 ${yMid})">${escapeXml(`${unit}${yAxis.log ? ' (log scale)' : ''}`)}</text>`);
  // Series.
  const joined = xAxis.continuous;
  series.forEach((s, i) => {
    const color = palette[i % palette.length]!;
    out.push(renderSeries(s.ours, color, false, joined, `${s.label} ours`, px, py));
    if (s.anchor.length > 0) out.push(renderSeries(s.anchor, color, true, joined, `${s.label} ${s.anchorName ?? 'anchor'}`, px, py));
  });
  // Legend.
  const lx = plot.x1 + margin.legendGap;
  let ly = plot.y1 + 4;
  out.push(`<g class="legend">`);
  series.forEach((s, i) => {
    const color = palette[i % palette.length]!;
    legendLabels(s).forEach((label, k) => {
      const dash = k === 1 ? ' stroke-dasharray="6 4"' : '';
      out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`);
      out.push(`<text x="${lx + 30}" y="${ly + 4}">${escapeXml(label)}</text>`);
      ly += legendLineHeight;
    });
    ly += 4;
  });
  out.push('</g>', '</g>');
  return out.join('\n');
}

/**
 * One series: on a continuous axis a polyline through its points; on a
 * category axis markers only (a line between unrelated categories would
 * suggest a trend), the anchor's on a short dashed tick.
 */
function renderSeries(
  points: readonly Point[],
  color: string,
  anchor: boolean,
  joined: boolean,
  name: string,
  px: (size: number | string) => number,
  py: (value: number) => number,
): string {
  const dash = anchor ? ' stroke-dasharray="6 4"' : '';
  // Hollow markers for the anchor so coinciding points stay distinguishable.
  const markerStyle = anchor ? `fill="#ffffff" stroke="${color}" stroke-width="1.5"` : `fill="${color}"`;
  const parts: string[] = [];
  if (joined) {
    const coords = points.map((p) => `${round(px(p.size))},${round(py(p.value))}`);
    parts.push(`<polyline points="${coords.join(' ')}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
  }
  for (const p of points) {
    const x = round(px(p.size));
    const y = round(py(p.value));
    if (!joined && anchor) parts.push(`<line x1="${x - 12}" y1="${y}" x2="${x + 12}" y2="${y}" stroke="${color}" stroke-width="2" stroke-dasharray="4 3"/>`);
    parts.push(`<circle cx="${x}" cy="${y}" r="${joined ? 3 : 4}" ${markerStyle}/>`);
  }
  return `<g class="series ${anchor ? 'anchor' : 'ours'}" data-series="${escapeXml(name)}">${parts.join('')}</g>`;
}

function groupSeries(rows: readonly BenchRow[]): Series[] {
  const byKey = new Map<string, Series>();
  for (const r of rows) {
    const label = `${r.op} ${r.dtype}`;
    let s = byKey.get(label);
    if (!s) {
      s = { label, unit: r.unit, ours: [], anchor: [], anchorName: undefined };
      byKey.set(label, s);
    }
    if (Number.isFinite(r.ours)) s.ours.push({ size: r.size, value: r.ours });
    if (r.anchor !== undefined && Number.isFinite(r.anchor)) {
      s.anchor.push({ size: r.size, value: r.anchor });
      s.anchorName ??= r.anchorName;
    }
  }
  return [...byKey.values()];
}

interface XAxis {
  label: string;
  /** True for the log-2 size axis, false for categories. */
  continuous: boolean;
  /** Fraction 0..1 along the axis. */
  position(size: number | string): number;
  ticks: { at: number | string; label: string }[];
}

function makeXAxis(rows: readonly BenchRow[]): XAxis {
  const numeric = rows.every((r) => typeof r.size === 'number' && r.size > 0);
  if (!numeric) {
    const categories = [...new Set(rows.map((r) => String(r.size)))];
    const slot = (size: number | string) => (categories.indexOf(String(size)) + 0.5) / categories.length;
    return { label: 'size', continuous: false, position: slot, ticks: categories.map((c) => ({ at: c, label: c })) };
  }
  const logs = rows.map((r) => Math.log2(r.size as number));
  let lo = Math.floor(Math.min(...logs));
  let hi = Math.ceil(Math.max(...logs));
  if (hi - lo < 2) {
    lo -= 1;
    hi += 1;
  }
  const step = Math.max(1, Math.ceil((hi - lo) / 10));
  const ticks: { at: number; label: string }[] = [];
  for (let k = lo; k <= hi; k += step) ticks.push({ at: 2 ** k, label: `2^${k}` });
  return {
    label: 'size (log 2)',
    continuous: true,
    position: (size) => (Math.log2(Number(size)) - lo) / (hi - lo),
    ticks,
  };
}

interface YAxis {
  log: boolean;
  position(value: number): number;
  ticks: number[];
}

function makeYAxis(values: readonly number[]): YAxis {
  const positive = values.filter((v) => v > 0);
  const max = values.length ? Math.max(...values) : 1;
  const min = positive.length ? Math.min(...positive) : 1;
  if (positive.length === values.length && positive.length > 0 && max / min > 100) {
    const lo = Math.floor(Math.log10(min));
    const hi = Math.ceil(Math.log10(max));
    const ticks: number[] = [];
    for (let k = lo; k <= hi; k++) ticks.push(10 ** k);
    return { log: true, position: (v) => (Math.log10(v) - lo) / (hi - lo), ticks };
  }
  const top = niceCeil(max > 0 ? max * 1.05 : 1);
  const step = niceCeil(top / 6);
  const ticks: number[] = [];
  for (let t = 0; t <= top + step / 2; t += step) ticks.push(Number(t.toPrecision(12)));
  const end = ticks[ticks.length - 1]!;
  return { log: false, position: (v) => v / end, ticks };
}

/** The smallest 1, 2, 2.5 or 5 times a power of ten that is ≥ x. */
function niceCeil(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

/** Tick values are round numbers already; drop float noise and trailing zeros. */
function formatTick(v: number): string {
  return String(Number(v.toPrecision(6)));
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
