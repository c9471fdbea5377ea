/**
 * Kernels written in TypeScript that the job queue runs like the WebAssembly ones: on the calling
 * thread and on the workers, with numeric arguments (and the thread's scratch). They drive the
 * WebAssembly kernels, and native libraries where the work needs them (the rollout's BLAS calls),
 * from whichever thread runs them.
 */
import { runRolloutTasks } from './gru-rollout-tasks.js';
import type { WasmMemory } from './wasm-api.js';

/** A kernel as the queue calls it. */
export type KernelCall = (...args: number[]) => void;

/** The host kernels' names, which follow the WebAssembly kernels in the queue's kernel list. */
export const HOST_KERNELS = ['gru_rollout'] as const;

/** A host kernel's name. */
export type HostKernelName = (typeof HOST_KERNELS)[number];

/** Whether `name` is a host kernel rather than an export of the module. */
export function isHostKernel(name: string): name is HostKernelName {
  return (HOST_KERNELS as readonly string[]).includes(name);
}

/** The host kernel `name` for a thread whose kernels are `exports`, instantiated on `memory`. */
export function hostKernel(name: HostKernelName, memory: WasmMemory, exports: Record<string, unknown>): KernelCall {
  switch (name) {
    case 'gru_rollout': {
      const ctx = { memory, sgemm: exports.sgemm as KernelCall, gruGates: exports.gru_gates_f32 as KernelCall };
      return (plan, part, scratch) => runRolloutTasks(ctx, plan!, part!, scratch!);
    }
  }
}
