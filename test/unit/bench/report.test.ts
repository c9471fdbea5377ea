import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  formatBytes,
  formatRate,
  median,
  renderMarkdown,
  renderSvg,
  runPython,
  writeReport,
  type BenchRow,
} from '../../../bench/report.js';

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

/** A minimal XML parser: enough to prove the SVG is well formed and to query it. */
function parseXml(xml: string): XmlElement {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  const token = /<\/([A-Za-z][\w:-]*)\s*>|<([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = token.exec(body)) !== null) {
    consumed = token.lastIndex;
    const top = stack[stack.length - 1]!;
    if (m[1]) {
      if (top.name !== m[1]) throw new Error(`closing </${m[1]}> while <${top.name}> is open`);
      stack.pop();
    } else if (m[2]) {
      const attrs: Record<string, string> = {};
      for (const a of m[3]!.matchAll(/([\w:-]+)="([^"]*)"/g)) {
        if (a[1]! in attrs) throw new Error(`duplicate attribute ${a[1]}`);
        attrs[a[1]!] = a[2]!;
      }
      const el: XmlElement = { name: m[2], attrs, children: [], text: '' };
      top.children.push(el);
      if (!m[4]) stack.push(el);
    } else {
      const text = m[5]!;
      if (/&(?!amp;|lt;|gt;|quot;|apos;)/.test(text)) throw new Error(`bare ampersand in ${text}`);
      top.text += text;
    }
  }
  if (consumed !== body.length) throw new Error(`unparsable XML at offset ${consumed}: ${body.slice(consumed, consumed + 40)}`);
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]!.name}>`);
  if (root.children.length !== 1) throw new Error('expected exactly one root element');
  return root.children[0]!;
}

function all(el: XmlElement, pred: (e: XmlElement) => boolean): XmlElement[] {
  const found: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    if (pred(e)) found.push(e);
    e.children.forEach(walk);
  };
  walk(el);
  return found;
}

const classed = (cls: string) => (e: XmlElement) => (e.attrs.class ?? '').split(' ').includes(cls);

const vectorAddRows: BenchRow[] = [
  { op: 'vector_add', dtype: 'f32', size: 2 ** 20, unit: 'GB/s', ours: 1800, anchor: 2000, anchorName: 'torch', roof: 4230 },
  { op: 'vector_add', dtype: 'f32', size: 2 ** 24, unit: 'GB/s', ours: 3700, anchor: 3780, anchorName: 'torch', roof: 4230 },
  { op: 'vector_add', dtype: 'f16', size: 2 ** 24, unit: 'GB/s', ours: 3600, note: 'no anchor | here' },
];

describe('renderMarkdown', () => {
  it('renders the header, a separator and one line per row with ratio and roof', () => {
    const md = renderMarkdown(vectorAddRows).split('\n');
    expect(md[0]).toBe('| op | dtype | size | ours | anchor | ratio | % of roof | note |');
    expect(md[1]).toBe('| --- | --- | --- | --- | --- | --- | --- | --- |');
    expect(md).toHaveLength(2 + vectorAddRows.length);
    expect(md[2]).toBe('| vector_add | f32 | 2^20 | 1800 GB/s | 2000 GB/s (torch) | 0.90x | 42.6% |  |');
    expect(md[4]).toBe('| vector_add | f16 | 2^24 | 3600 GB/s | — | — | — | no anchor \\| here |');
  });

  it('keeps a given ratio and formats small times', () => {
    const md = renderMarkdown([
      { op: 'launch empty', dtype: 'safe', size: 'n=100000', unit: 'us', ours: 2.345, anchor: 2.1, ratio: 9, anchorName: 'C' },
    ]);
    expect(md.split('\n')[2]).toBe('| launch empty | safe | n=100000 | 2.35 us | 2.10 us (C) | 9.00x | — |  |');
  });
});

describe('renderSvg', () => {
  it('is well-formed XML with axes, labels, a legend and one solid + one dashed line per anchored series', () => {
    const svg = parseXml(renderSvg('ops', vectorAddRows));
    expect(svg.name).toBe('svg');
    expect(svg.attrs.xmlns).toBe('http://www.w3.org/2000/svg');
    expect(all(svg, classed('x-axis'))).toHaveLength(1);
    expect(all(svg, classed('y-axis'))).toHaveLength(1);
    const axisLabels = all(svg, classed('axis-label')).map((e) => e.text);
    expect(axisLabels).toEqual(['size (log 2)', 'GB/s']);
    const ours = all(svg, classed('ours'));
    const anchors = all(svg, classed('anchor'));
    expect(ours.map((e) => e.attrs['data-series'])).toEqual(['vector_add f32 ours', 'vector_add f16 ours']);
    expect(anchors.map((e) => e.attrs['data-series'])).toEqual(['vector_add f32 torch']);
    for (const g of ours) expect(g.children[0]!.attrs['stroke-dasharray']).toBeUndefined();
    expect(anchors[0]!.children[0]!.attrs['stroke-dasharray']).toBe('6 4');
    // The f32 series has two points, the f16 one.
    expect(ours[0]!.children[0]!.attrs.points!.split(' ')).toHaveLength(2);
    expect(ours[1]!.children.filter((c) => c.name === 'circle')).toHaveLength(1);
    const legend = all(svg, classed('legend'))[0]!;
    const legendText = legend.children.filter((c) => c.name === 'text').map((c) => c.text);
    expect(legendText).toEqual(['vector_add f32 (ours)', 'vector_add f32 (torch)', 'vector_add f16 (ours)']);
    const tickLabels = all(svg, (e) => e.name === 'text').map((e) => e.text);
    expect(tickLabels).toContain('2^20');
    expect(tickLabels).toContain('2^24');
  });

  it('puts larger sizes further right on the log-2 axis and larger values higher', () => {
    const svg = parseXml(renderSvg('ops', vectorAddRows));
    const [a, b] = all(svg, classed('ours'))[0]!.children[0]!.attrs.points!.split(' ').map((p) => p.split(',').map(Number));
    expect(b![0]!).toBeGreaterThan(a![0]!);
    expect(b![1]!).toBeLessThan(a![1]!); // SVG y grows downwards
  });

  it('draws one panel per unit, category axes for string sizes, a log y axis for wide ranges, and escapes text', () => {
    const rows: BenchRow[] = [
      { op: 'launch <empty>', dtype: 'safe & sound', size: 'n=1e5', unit: 'us', ours: 2.5, anchor: 2.2, anchorName: 'C "nvcc"' },
      { op: 'compile', dtype: 'first', size: 'small', unit: 'us', ours: 44000 },
      { op: 'matmul', dtype: 'bf16', size: 4096, unit: 'TFLOP/s', ours: 700, anchor: 750, anchorName: 'cuBLAS' },
    ];
    const text = renderSvg('mixed', rows);
    const svg = parseXml(text);
    const panels = all(svg, classed('panel'));
    expect(panels.map((p) => p.attrs['data-unit'])).toEqual(['us', 'TFLOP/s']);
    const usLabels = all(panels[0]!, classed('axis-label')).map((e) => e.text);
    expect(usLabels).toEqual(['size', 'us (log scale)']);
    const usTicks = all(panels[0]!, (e) => e.name === 'text').map((e) => e.text);
    expect(usTicks).toEqual(expect.arrayContaining(['n=1e5', 'small', '1', '100000']));
    // Categories are not joined into lines; the anchor gets a hollow marker on a dashed tick.
    const usSeries = all(panels[0]!, classed('series'));
    expect(usSeries.flatMap((g) => g.children.map((c) => c.name))).not.toContain('polyline');
    const anchor = all(panels[0]!, classed('anchor'))[0]!;
    expect(anchor.children.map((c) => c.name)).toEqual(['line', 'circle']);
    expect(anchor.children[0]!.attrs['stroke-dasharray']).toBeDefined();
    expect(anchor.children[1]!.attrs.fill).toBe('#ffffff');
    expect(text).toContain('launch &lt;empty&gt; safe &amp; sound');
    expect(text).toContain('C &quot;nvcc&quot;');
  });

  it('grows the legend column and the panel to fit long labels and many series', () => {
    const many: BenchRow[] = Array.from({ length: 30 }, (_, i) => ({
      op: `an operation with a rather long descriptive name ${i}`,
      dtype: 'bf16',
      size: 1024,
      unit: 'GB/s' as const,
      ours: 100 + i,
      anchor: 90,
      anchorName: 'torch',
    }));
    const svg = parseXml(renderSvg('many', many));
    const longest = Math.max(...all(svg, classed('legend'))[0]!.children.filter((c) => c.name === 'text').map((c) => c.text.length));
    expect(Number(svg.attrs.width)).toBeGreaterThan(78 + 460 + 16 + 30 + longest * 6.8);
    const lastLegendY = Math.max(...all(svg, classed('legend'))[0]!.children.filter((c) => c.name === 'text').map((c) => Number(c.attrs.y)));
    expect(Number(svg.attrs.height)).toBeGreaterThan(lastLegendY);
  });

  it('renders an empty report as a valid document', () => {
    expect(parseXml(renderSvg('none', [])).name).toBe('svg');
  });
});

describe('writeReport', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    vi.restoreAllMocks();
  });

  it('writes JSON with rows, computed ratios and meta, plus the SVG, and prints the table', () => {
    dir = mkdtempSync(join(tmpdir(), 'report-'));
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const written = writeReport('ops-test', vectorAddRows, { dir, meta: { device: 'Fake GPU', driver: 13000 } });
    expect(written.jsonPath).toBe(join(dir, 'ops-test.json'));
    const json = JSON.parse(readFileSync(written.jsonPath, 'utf8'));
    expect(json.name).toBe('ops-test');
    expect(json.meta.device).toBe('Fake GPU');
    expect(json.meta.driver).toBe(13000);
    expect(json.meta.node).toBe(process.version);
    expect(Number.isNaN(Date.parse(json.meta.date))).toBe(false);
    expect(json.rows).toHaveLength(3);
    expect(json.rows[0].ratio).toBeCloseTo(0.9, 12);
    expect(json.rows[2].ratio).toBeUndefined();
    expect(parseXml(readFileSync(written.svgPath, 'utf8')).name).toBe('svg');
    expect(log.mock.calls.flat().join('\n')).toContain(written.markdown);
  });

  it('refuses a name that is not a plain file name', () => {
    expect(() => writeReport('../escape', [], { dir: tmpdir() })).toThrow(/plain file name/);
  });
});

describe('helpers', () => {
  it('median handles odd, even and unsorted input, and refuses empty input', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow();
  });

  it('formats bytes and rates', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(16 * 2 ** 20)).toBe('16.0 MiB');
    expect(formatBytes(80 * 2 ** 30)).toBe('80.0 GiB');
    expect(formatRate(3780.4, 'GB/s')).toBe('3780 GB/s');
    expect(formatRate(51.23, 'TFLOP/s')).toBe('51.2 TFLOP/s');
    expect(formatRate(3.4, 'us')).toBe('3.40 us');
    expect(formatRate(0.2137, 'us')).toBe('0.214 us');
  });
});

describe('runPython', () => {
  let dir: string | undefined;
  const saved = process.env.GPUCOMPUTE_PYTHON;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.GPUCOMPUTE_PYTHON;
    else process.env.GPUCOMPUTE_PYTHON = saved;
    vi.restoreAllMocks();
  });

  /** A fake interpreter: a shell script that runs the "script" argument with sh. */
  function fakePython(): string {
    dir = mkdtempSync(join(tmpdir(), 'pyfake-'));
    const exe = join(dir, 'python');
    writeFileSync(exe, '#!/bin/sh\nexec sh "$@"\n');
    chmodSync(exe, 0o755);
    process.env.GPUCOMPUTE_PYTHON = exe;
    return dir;
  }

  function script(body: string): string {
    const path = join(dir!, `s${Math.random().toString(36).slice(2)}.sh`);
    writeFileSync(path, body);
    return path;
  }

  it('returns the last JSON line of stdout, ignoring chatter after it', () => {
    fakePython();
    const s = script('echo warming up\necho \'{"a": 1}\'\necho \'{"empty_us": 3.4}\'\necho done\n');
    expect(runPython(s, [])).toEqual({ empty_us: 3.4 });
  });

  it('passes arguments through', () => {
    fakePython();
    const s = script('echo "{\\"arg\\": \\"$1\\"}"\n');
    expect(runPython(s, ['hello'])).toEqual({ arg: 'hello' });
  });

  it('returns undefined with a note when a module is missing, the interpreter is missing, or it times out', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    fakePython();
    const missing = script(`echo "ModuleNotFoundError: No module named 'cupy'" >&2\nexit 1\n`);
    expect(runPython(missing, [])).toBeUndefined();
    expect(log.mock.calls.at(-1)![0]).toMatch(/python module cupy is not installed/);
    const slow = script('sleep 5\n');
    expect(runPython(slow, [], 200)).toBeUndefined();
    expect(log.mock.calls.at(-1)![0]).toMatch(/timed out after 200 ms/);
    const silent = script('echo not json\n');
    expect(runPython(silent, [])).toBeUndefined();
    expect(log.mock.calls.at(-1)![0]).toMatch(/no JSON line/);
    process.env.GPUCOMPUTE_PYTHON = join(dir!, 'no-such-python');
    expect(runPython(silent, [])).toBeUndefined();
    expect(log.mock.calls.at(-1)![0]).toMatch(/not found/);
  });
});
