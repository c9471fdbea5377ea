import { DisposedError, InvalidArgumentError } from '../errors.js';
import type { Context } from './context.js';
import type { ContextCore } from './context-core.js';
import { StreamCaptureMode } from './generated/enums.js';
import { guard, unguard } from './leak-guard.js';
import { ensureCurrent } from './raw/context.js';
import {
  graphDestroy,
  graphExecDestroy,
  graphGetNodeCount,
  graphInstantiate,
  graphLaunch,
  graphUpload,
  streamBeginCapture,
  streamEndCapture,
} from './raw/graph.js';
import type { CUgraph, CUgraphExec } from './raw/handles.js';
import type { Stream } from './stream.js';

/** Options of {@link Graph.capture}. */
export interface CaptureOptions {
  /**
   * Which unsafe calls (synchronous allocations, legacy-stream work) other
   * code may make while capturing: `'threadLocal'` (default) forbids them on
   * this thread only, `'global'` on every thread, `'relaxed'` nowhere.
   */
  mode?: 'global' | 'threadLocal' | 'relaxed';
}

const CAPTURE_MODES = {
  global: StreamCaptureMode.GLOBAL,
  threadLocal: StreamCaptureMode.THREAD_LOCAL,
  relaxed: StreamCaptureMode.RELAXED,
} as const;

/**
 * A CUDA graph recorded from a stream: the work is captured once and can be
 * replayed many times with one launch each (after {@link Graph.instantiate}).
 * Replays read and write the same buffers the capture used.
 */
export class Graph implements Disposable {
  /**
   * Records the work `fn` queues on `stream` (kernel launches, async copies,
   * fills) into a graph, without running it. `fn` must be synchronous.
   */
  static capture(stream: Stream, fn: () => void, options: CaptureOptions = {}): Graph {
    const mode = CAPTURE_MODES[options.mode ?? 'threadLocal'];
    if (mode === undefined) throw new InvalidArgumentError(`Graph.capture: unknown mode ${String(options.mode)}`);
    const handle = stream.handle;
    const core = stream.core;
    core.enter();
    core.acquire();
    let graph: CUgraph | undefined;
    try {
      streamBeginCapture(handle, mode);
      let failure: unknown;
      try {
        const result: unknown = fn();
        if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
          failure = new InvalidArgumentError('Graph.capture: the callback must be synchronous (it returned a promise)');
        }
      } catch (err) {
        failure = err;
      }
      core.enter();
      try {
        graph = streamEndCapture(handle);
      } catch (err) {
        throw failure ?? err;
      }
      if (failure !== undefined) throw failure;
      return new Graph(stream.context, core, graph);
    } catch (err) {
      if (graph !== undefined) graphDestroy(graph);
      core.release();
      throw err;
    }
  }

  readonly #core: ContextCore;
  readonly #handle: CUgraph;
  #disposed = false;

  private constructor(
    /** The context the graph's work runs in. */
    readonly context: Context,
    core: ContextCore,
    handle: CUgraph,
  ) {
    this.#core = core;
    this.#handle = handle;
    guard(this, 'Graph', () => release(core, () => graphDestroy(handle)));
  }

  /** The CUgraph handle (raw tier). */
  get handle(): CUgraph {
    if (this.#disposed) throw new DisposedError('Graph');
    return this.#handle;
  }

  /** How many nodes (kernels, copies, ...) the graph holds. */
  get nodeCount(): number {
    return graphGetNodeCount(this.#enter());
  }

  /** Compiles the graph into an executable one; the graph itself may be disposed afterwards. */
  instantiate(): GraphExec {
    const graph = this.#enter();
    this.#core.acquire();
    try {
      return new GraphExec(this.context, this.#core, graphInstantiate(graph, 0));
    } catch (err) {
      this.#core.release();
      throw err;
    }
  }

  /** Destroys the graph (executable graphs made from it stay valid). Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    const handle = this.#handle;
    release(this.#core, () => graphDestroy(handle));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #enter(): CUgraph {
    if (this.#disposed) throw new DisposedError('Graph');
    this.#core.enter();
    return this.#handle;
  }
}

/** An instantiated graph: launch it on a stream to replay the captured work. */
export class GraphExec implements Disposable {
  readonly #core: ContextCore;
  readonly #handle: CUgraphExec;
  #disposed = false;

  /** @internal Use `graph.instantiate()`. */
  constructor(
    /** The context the work runs in. */
    readonly context: Context,
    core: ContextCore,
    handle: CUgraphExec,
  ) {
    this.#core = core;
    this.#handle = handle;
    guard(this, 'GraphExec', () => release(core, () => graphExecDestroy(handle)));
  }

  /** The CUgraphExec handle (raw tier). */
  get handle(): CUgraphExec {
    if (this.#disposed) throw new DisposedError('GraphExec');
    return this.#handle;
  }

  /** Queues one replay of the graph on `stream`. */
  launch(stream: Stream): void {
    graphLaunch(this.#enter(), this.#streamHandle(stream));
  }

  /** Uploads the graph's resources to the device ahead of the first launch (optional; makes it faster). */
  upload(stream: Stream): void {
    graphUpload(this.#enter(), this.#streamHandle(stream));
  }

  /** Destroys the executable graph. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    unguard(this);
    const handle = this.#handle;
    release(this.#core, () => graphExecDestroy(handle));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #streamHandle(stream: Stream): bigint {
    if (stream.core !== this.#core) throw new InvalidArgumentError('GraphExec.launch: the stream belongs to another context');
    return stream.handle;
  }

  #enter(): CUgraphExec {
    if (this.#disposed) throw new DisposedError('GraphExec');
    this.#core.enter();
    return this.#handle;
  }
}

function release(core: ContextCore, destroy: () => void): void {
  try {
    if (!core.broken) {
      ensureCurrent(core.handle);
      destroy();
    }
  } finally {
    core.release();
  }
}
