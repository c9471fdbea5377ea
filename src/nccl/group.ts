import { forgetCurrentContext } from '../driver/raw/context.js';
import { InvalidArgumentError } from '../errors.js';
import { groupEnd, groupStart } from './raw/group.js';

/**
 * Runs `fn` inside ncclGroupStart / ncclGroupEnd: the NCCL calls it makes are only recorded, and
 * queued together when it returns (ncclGroupEnd runs when it throws too, so NCCL is never left
 * inside a group). One thread driving several ranks must call their collectives in a group; a
 * rank's matching sends and receives go in one; many small collectives in one fuse into one
 * launch. Groups nest. `fn` must be synchronous.
 */
export function ncclGroup<T>(fn: () => T): T {
  if (typeof fn !== 'function') throw new InvalidArgumentError(`ncclGroup: fn must be a function, got ${typeof fn}`);
  groupStart();
  let result: T;
  try {
    result = fn();
  } finally {
    try {
      groupEnd();
    } finally {
      // ncclGroupEnd launches on each rank's device and may leave another context current.
      forgetCurrentContext();
    }
  }
  if (result instanceof Promise) {
    result.catch(() => undefined);
    throw new InvalidArgumentError('ncclGroup: fn returned a promise; the NCCL calls of a group must be made synchronously');
  }
  return result;
}
