/**
 * Logging for GpuCompute, in the style of node-llama-cpp: the caller may pass
 * a `logger(level, message)` function and a `logLevel` threshold; by default
 * messages at warn and above go to the console with a `[gpucompute]` prefix.
 * The logger also carries the `onProgress` listener, so every part that logs
 * (the kernel registry, the autotuner) reports progress through it too.
 */
import { formatProgress, type ProgressEvent, type ProgressListener } from './progress.js';

/** Severity of one message, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Threshold option: messages below it are dropped; 'silent' drops all. */
export type LogLevelSetting = LogLevel | 'silent';

/** Receives every message at or above the threshold. */
export type LoggerFunction = (level: LogLevel, message: string) => void;

const RANK: Record<LogLevelSetting, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };

/** Every level, lowest first (for validating options). */
export const LOG_LEVELS: readonly LogLevelSetting[] = ['debug', 'info', 'warn', 'error', 'silent'];

function consoleLogger(level: LogLevel, message: string): void {
  const line = `[gpucompute] ${message}`;
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else if (level === 'info') console.info(line);
  else console.debug(line);
}

/** A sink plus a threshold, and a progress listener; what backends and the front-end log through. */
export class Logger {
  readonly level: LogLevelSetting;
  private readonly sink: LoggerFunction;
  /** Receives every {@link Logger.progress} event, whatever the level. */
  readonly onProgress: ProgressListener | undefined;

  constructor(sink: LoggerFunction = consoleLogger, level: LogLevelSetting = 'warn', onProgress?: ProgressListener) {
    this.sink = sink;
    this.level = level;
    this.onProgress = onProgress;
  }

  /**
   * Reports a step of long first-run work: to the progress listener, and as one line at info
   * level. A listener that throws does not fail the work it watches: its error is logged at warn.
   */
  progress(event: ProgressEvent): void {
    if (this.onProgress) {
      try {
        this.onProgress(event);
      } catch (err) {
        this.warn(`onProgress threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (this.enabled('info')) this.sink('info', formatProgress(event));
  }

  /** True when a message at `level` would be delivered (to skip building costly messages). */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= RANK[this.level];
  }

  log(level: LogLevel, message: string): void {
    if (this.enabled(level)) this.sink(level, message);
  }

  debug(message: string): void {
    this.log('debug', message);
  }

  info(message: string): void {
    this.log('info', message);
  }

  warn(message: string): void {
    this.log('warn', message);
  }

  error(message: string): void {
    this.log('error', message);
  }
}
