/**
 * A sequence of per-step launches replayed as a CUDA graph once the same configuration comes
 * back: the first call with a key runs eagerly (which also lets the matmul autotuner time its
 * candidates, which a capture cannot), the second captures and replays, later ones replay.
 * Everything a capture bakes in (addresses, extents, the stream) must be in the key; the scratch
 * of a call is part of its key too, so a cached graph holds no memory and is replayed only while
 * the pool hands out the same blocks. A capture that fails leaves the key eager for good.
 */
import { Graph, type GraphExec } from '../../../driver/graph.js';
import type { OpStateKey } from '../../backend/op-states.js';
import { isConfigurationFailure } from '../configuration-failure.js';
import type { CudaContext } from '../cuda-context.js';

/** Graphs kept per backend and kind of sequence. */
const MAX_GRAPHS = 4;
/** Keys remembered as seen before the set starts over. */
const MAX_SEEN = 256;

/** The graphs of one kind of launch sequence on one backend. */
export interface StepGraphs {
  /** Keys run once eagerly: the next call with the key is captured. */
  readonly seen: Set<string>;
  /** Keys whose capture failed: always eager. */
  readonly uncapturable: Set<string>;
  /** Most recently used last. */
  readonly graphs: { key: string; exec: GraphExec }[];
  /** Destroys the cached graphs. */
  dispose(): void;
}

/** The per-backend state of a kind of launch sequence named `name` (its graphs go with the backend). */
export function stepGraphsKey(name: string): OpStateKey<StepGraphs, CudaContext> {
  return {
    name,
    create: () => {
      const graphs: StepGraphs['graphs'] = [];
      return {
        seen: new Set(),
        uncapturable: new Set(),
        graphs,
        dispose: () => {
          for (const g of graphs) g.exec.dispose();
          graphs.length = 0;
        },
      };
    },
  };
}

/**
 * Queues `enqueueAll`'s launches on the backend's stream: replayed from a cached graph for `key`,
 * captured on the key's second call, eager otherwise (and inside `gpu.capture`, whose graph takes
 * them as they come). `label` names the op in the debug line of a failed capture.
 */
export function runSteps(backend: CudaContext, graphs: StepGraphs, key: string, enqueueAll: () => void, label: string): void {
  if (backend.capturing) {
    enqueueAll();
    return;
  }
  const cachedAt = graphs.graphs.findIndex((g) => g.key === key);
  if (cachedAt >= 0) {
    const [g] = graphs.graphs.splice(cachedAt, 1);
    graphs.graphs.push(g!);
    g!.exec.launch(backend.stream);
    return;
  }
  if (graphs.seen.has(key) && !graphs.uncapturable.has(key)) {
    let exec: GraphExec | undefined;
    try {
      const graph = Graph.capture(backend.stream, enqueueAll);
      try {
        exec = graph.instantiate();
      } finally {
        graph.dispose();
      }
    } catch (err) {
      if (!isConfigurationFailure(err)) throw err;
      graphs.uncapturable.add(key);
      backend.logger?.debug(`${label}: graph capture failed, running eagerly (${(err as Error).message})`);
    }
    if (exec) {
      if (graphs.graphs.length >= MAX_GRAPHS) graphs.graphs.shift()!.exec.dispose();
      graphs.graphs.push({ key, exec });
      exec.launch(backend.stream);
      return;
    }
  }
  if (graphs.seen.size > MAX_SEEN) graphs.seen.clear();
  graphs.seen.add(key);
  enqueueAll();
}
