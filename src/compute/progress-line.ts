/**
 * A progress display for long first-run work on a terminal or a log: on a TTY one line that each
 * event rewrites (`compiling kernels 12/40 softmax.cu?GC_DTYPE=GC_F32`), elsewhere one plain line
 * per module compiled or failed (cache hits print nothing there, so logs stay short).
 */
import { formatDuration, progressCount, type ProgressEvent, type ProgressListener } from './core/progress.js';

/** Where a {@link ProgressLine} writes: `process.stderr` or `process.stdout` fit. */
export interface ProgressStream {
  write(text: string): unknown;
  /** True on a terminal: the line is rewritten in place. */
  readonly isTTY?: boolean;
  /** The terminal's width; the line is cut to fit it. */
  readonly columns?: number;
}

/** Erases the current terminal line and returns to its start. */
const CLEAR_LINE = '\r\x1b[2K';

/**
 * Shows progress events as they come. Pass {@link ProgressLine.update} as an `onProgress`
 * listener, and call {@link ProgressLine.end} when the work is over:
 *
 * ```ts
 * const line = new ProgressLine(process.stderr, 'compiling kernels');
 * const result = await warmupKernels({ onProgress: line.update });
 * line.end(`${result.compiled} compiled, ${result.cached} cached`);
 * ```
 */
export class ProgressLine {
  readonly #stream: ProgressStream;
  readonly #label: string;
  readonly #tty: boolean;
  /** Whether a rewritable line is on screen. */
  #shown = false;

  /**
   * @param stream - where to write (default `process.stderr`)
   * @param label - what the line says the work is, e.g. `compiling kernels`; default the event's phase
   */
  constructor(stream: ProgressStream = process.stderr, label?: string) {
    this.#stream = stream;
    this.#label = label ?? '';
    this.#tty = stream.isTTY === true;
  }

  /** Shows one event: an `onProgress` listener (bound, so it can be passed as it is). */
  readonly update: ProgressListener = (event: ProgressEvent): void => {
    const label = this.#label || (event.phase === 'compile' ? 'compiling' : 'tuning');
    if (this.#tty) {
      const outcome = event.outcome === 'failed' ? ' FAILED' : '';
      this.#stream.write(`${CLEAR_LINE}${this.#fit(`${label} ${progressCount(event)}${outcome} ${event.what}`)}`);
      this.#shown = true;
      return;
    }
    if (event.outcome === 'cached') return;
    const how = event.outcome === 'failed' ? `FAILED after ${formatDuration(event.ms)}` : formatDuration(event.ms);
    this.#stream.write(`${label} ${progressCount(event)} ${event.what} (${how})\n`);
  };

  /** Ends the display: clears the line on a TTY, then writes `message` (if any) on a line of its own. */
  end(message?: string): void {
    if (this.#tty && this.#shown) this.#stream.write(CLEAR_LINE);
    this.#shown = false;
    if (message !== undefined) this.#stream.write(`${message}\n`);
  }

  /** Cut to the terminal's width (one column spare, so the cursor never wraps). */
  #fit(text: string): string {
    const width = this.#stream.columns;
    if (width === undefined || width < 10 || text.length < width) return text;
    return `${text.slice(0, width - 2)}…`;
  }
}
