/**
 * Whether any tensor in the process was ever marked to require grad (`requiresGrad_`). Until one
 * is, no op can have an input that requires grad (a recorded output needs such an input), so
 * autograd answers "not recording" without looking at an op's inputs: the no-grad common case.
 * Never cleared: a count of the tensors that require grad would have to follow every dispose.
 */
export let gradRequested = false;

/** Notes that a tensor was marked to require grad (see {@link gradRequested}). */
export function noteGradRequested(): void {
  gradRequested = true;
}

/**
 * Whether the ops of one GpuCompute record for autograd: on by default, off while a
 * `gpu.noGrad` function runs, and refused while a `gpu.capture` function runs (a graph replays
 * device work only, and the autograd graph is host state).
 */
export class GradMode {
  /** False while a `gpu.noGrad` function runs. */
  #enabled = true;
  /** Captured functions running now (their eager runs included). */
  #captures = 0;

  /** Whether ops record now (inside a capture they would, and are refused instead). */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** True while a `gpu.capture` function runs. */
  get capturing(): boolean {
    return this.#captures > 0;
  }

  /** Runs `fn` with recording switched `enabled`, restoring the previous setting after. */
  run<T>(enabled: boolean, fn: () => T): T {
    const previous = this.#enabled;
    this.#enabled = enabled;
    try {
      return fn();
    } finally {
      this.#enabled = previous;
    }
  }

  /** Runs `fn` as the body of a captured function. */
  captured<T>(fn: () => T): T {
    this.#captures++;
    try {
      return fn();
    } finally {
      this.#captures--;
    }
  }
}
