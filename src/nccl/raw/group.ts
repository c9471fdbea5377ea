import { nccl } from '../bindings.js';
import { checkNccl } from '../nccl-error.js';

/**
 * ncclGroupStart: until the matching {@link groupEnd}, NCCL calls are only recorded. Needed when
 * one thread drives several ranks (each call would otherwise wait for the others), to pair a
 * rank's sends and receives, and to fuse many collectives into one launch. Groups nest.
 */
export function groupStart(): void {
  checkNccl(nccl.ncclGroupStart(), 'ncclGroupStart');
}

/** ncclGroupEnd: queues everything recorded since the matching {@link groupStart}. */
export function groupEnd(): void {
  checkNccl(nccl.ncclGroupEnd(), 'ncclGroupEnd');
}
