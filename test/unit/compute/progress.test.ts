/** Progress events: their text, the logger that carries the listener, and the progress line on a terminal and in a log. */
import { describe, expect, it } from 'vitest';
import { Logger } from '../../../src/compute/core/logger.js';
import { formatProgress, type ProgressEvent } from '../../../src/compute/core/progress.js';
import { ProgressLine } from '../../../src/compute/progress-line.js';

const event = (over: Partial<ProgressEvent> = {}): ProgressEvent => ({ phase: 'compile', done: 3, total: 40, what: 'softmax.cu?GC_DTYPE=GC_F32', outcome: 'done', ms: 812.4, ...over });

describe('formatProgress', () => {
  it('says the phase, the count, what and how it ended', () => {
    expect(formatProgress(event())).toBe('compile 3/40 softmax.cu?GC_DTYPE=GC_F32 in 812 ms');
    expect(formatProgress(event({ total: undefined, ms: 2412 }))).toBe('compile #3 softmax.cu?GC_DTYPE=GC_F32 in 2.4 s');
    expect(formatProgress(event({ outcome: 'cached', ms: 0.4 }))).toBe('compile 3/40 softmax.cu?GC_DTYPE=GC_F32 cached');
    expect(formatProgress(event({ phase: 'tune', done: 2, total: 8, what: 'matmul f16 64x64x64 NN: mma64x64x32w2x2s3', outcome: 'failed', ms: 3 }))).toBe(
      'tune 2/8 matmul f16 64x64x64 NN: mma64x64x32w2x2s3 failed after 3 ms',
    );
  });
});

describe('Logger.progress', () => {
  it('gives the event to the listener at any level, and the line to the sink at info and below', () => {
    for (const [level, lines] of [
      ['debug', 1],
      ['info', 1],
      ['warn', 0],
      ['silent', 0],
    ] as const) {
      const seen: ProgressEvent[] = [];
      const logged: string[] = [];
      const logger = new Logger((l, m) => logged.push(`${l}: ${m}`), level, (e) => seen.push(e));
      logger.progress(event());
      expect(seen).toEqual([event()]);
      expect(logged).toEqual(lines ? ['info: compile 3/40 softmax.cu?GC_DTYPE=GC_F32 in 812 ms'] : []);
    }
  });

  it('survives a listener that throws, and says so at warn', () => {
    const logged: string[] = [];
    const logger = new Logger((l, m) => logged.push(`${l}: ${m}`), 'warn', () => {
      throw new Error('boom');
    });
    expect(() => logger.progress(event())).not.toThrow();
    expect(logged).toEqual(['warn: onProgress threw: boom']);
  });

  it('has no listener unless given one', () => {
    expect(new Logger().onProgress).toBeUndefined();
  });
});

function sink(isTTY: boolean, columns?: number) {
  let text = '';
  return { stream: { write: (t: string) => (text += t), isTTY, ...(columns === undefined ? {} : { columns }) }, text: () => text };
}

describe('ProgressLine', () => {
  it('rewrites one line on a terminal, cut to its width, and clears it at the end', () => {
    const out = sink(true, 40);
    const line = new ProgressLine(out.stream, 'compiling kernels');
    line.update(event({ done: 1, outcome: 'cached' }));
    line.update(event({ done: 2, what: 'fill.cu' }));
    line.update(event({ done: 3, what: 'x.cu', outcome: 'failed' }));
    line.end('3 modules');
    const writes = out.text().split('\r\x1b[2K');
    expect(writes).toEqual(['', 'compiling kernels 1/40 softmax.cu?GC_D…', 'compiling kernels 2/40 fill.cu', 'compiling kernels 3/40 FAILED x.cu', '3 modules\n']);
    expect(out.text()).not.toContain('\n3');
    for (const w of writes) expect(w.length).toBeLessThan(40);
  });

  it('writes a plain line per module compiled or failed elsewhere, none for cache hits', () => {
    const out = sink(false);
    const line = new ProgressLine(out.stream);
    line.update(event({ done: 1, outcome: 'cached' }));
    line.update(event({ done: 2, what: 'fill.cu', ms: 95 }));
    line.update(event({ phase: 'tune', done: 1, total: 2, what: 'matmul f32 8x8x8 NN: simt', outcome: 'failed', ms: 1500 }));
    line.end();
    expect(out.text()).toBe('compiling 2/40 fill.cu (95 ms)\ntuning 1/2 matmul f32 8x8x8 NN: simt (FAILED after 1.5 s)\n');
  });

  it('ends without a message on a terminal by clearing only what it showed', () => {
    const out = sink(true);
    const line = new ProgressLine(out.stream);
    line.end();
    expect(out.text()).toBe('');
    line.update(event());
    line.end();
    expect(out.text()).toBe('\r\x1b[2Kcompiling 3/40 softmax.cu?GC_DTYPE=GC_F32\r\x1b[2K');
  });
});
