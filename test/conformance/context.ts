/**
 * What every family of the suite works with: the registration under test, its GpuCompute, a CPU
 * GpuCompute to compare with (none when the CPU backend itself is under test), the dtypes the
 * backend claims, and running one op on both with the same inputs.
 */
import { describe } from 'vitest';
import type { BackendRegistration } from '../../src/compute/backend/registration.js';
import { DTYPES, type DType } from '../../src/compute/core/dtype.js';
import { cpuRegistration } from '../../src/compute/cpu/registration.js';
import { GpuCompute } from '../../src/compute/gpu-compute.js';
import type { Tensor } from '../../src/compute/tensor/tensor.js';
import type { Runs } from './compare.js';
import { download, upload, type Values } from './host.js';
import { missingOp, OP_NEEDS, type NeedingOp } from './optional-ops.js';

export type FloatDType = Exclude<DType, 'i32'>;

/** Opens a GpuCompute on the backend under test. */
export type OpenCompute = (options: { poolLimitBytes?: number }) => Promise<GpuCompute>;

/** An op on a GpuCompute and its inputs, returning one output or several. */
export type Op = (gpu: GpuCompute, inputs: Tensor[]) => Tensor | readonly Tensor[];

export class ConformanceContext {
  readonly registration: BackendRegistration;
  /** The dtypes the backend claims: every one today; the families take theirs from here, so a backend could claim fewer. */
  readonly dtypes: readonly DType[] = DTYPES;
  readonly #open: OpenCompute;
  #gpu: GpuCompute | undefined;
  #cpu: GpuCompute | undefined;

  constructor(registration: BackendRegistration, open: OpenCompute) {
    this.registration = registration;
    this.#open = open;
  }

  /** Opens the backend under test and, unless it is the CPU backend itself, a CPU one. */
  async open(): Promise<void> {
    this.#gpu = await this.#open({});
    if (this.registration !== cpuRegistration) this.#cpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent' });
  }

  close(): void {
    this.#gpu?.dispose();
    this.#cpu?.dispose();
  }

  /** The GpuCompute under test (from beforeAll on). */
  get gpu(): GpuCompute {
    if (!this.#gpu) throw new Error('the backend under test is opened in beforeAll');
    return this.#gpu;
  }

  /** The CPU GpuCompute to compare with; undefined when the CPU backend itself is under test. */
  get cpu(): GpuCompute | undefined {
    return this.#cpu;
  }

  /** Another GpuCompute of the backend under test (the caller disposes it). */
  openAnother(options: { poolLimitBytes?: number } = {}): Promise<GpuCompute> {
    return this.#open(options);
  }

  /** The float dtypes the backend claims among `allowed`. */
  floatDtypes(allowed: readonly FloatDType[] = ['f32', 'f16', 'bf16']): FloatDType[] {
    return allowed.filter((d) => this.dtypes.includes(d));
  }

  /**
   * A describe for the public ops `ops`: skipped, with the reason in its name, when the
   * registration leaves out what they need (the support family checks their refusal instead).
   */
  describeOps(name: string, ops: readonly NeedingOp[], body: () => void): void {
    const missing = ops.map((op) => missingOp(this.registration, OP_NEEDS[op])).find((m) => m !== undefined);
    if (missing) describe.skip(`${name}: unsupported (${missing.op}: ${missing.reason})`, body);
    else describe(name, body);
  }

  /**
   * Runs `op` on fresh tensors holding `inputs` on the backend under test and, unless that is the
   * CPU backend, on the CPU backend too; reads every output back, disposes everything, and notes
   * the bytes left in use.
   */
  run(inputs: readonly Values[], op: Op): Runs {
    const got = runOn(this.gpu, inputs, op);
    const cpu = this.#cpu && runOn(this.#cpu, inputs, op);
    return { got: got.outputs, cpu: cpu?.outputs, leaked: got.leaked + (cpu?.leaked ?? 0) };
  }
}

function runOn(gpu: GpuCompute, inputs: readonly Values[], op: Op): { outputs: Values[]; leaked: number } {
  const before = gpu.memoryStats().inUseBytes;
  const tensors: Tensor[] = [];
  let outputs: Values[];
  try {
    for (const h of inputs) tensors.push(upload(gpu, h));
    const result = op(gpu, tensors);
    const produced = Array.isArray(result) ? (result as readonly Tensor[]) : [result as Tensor];
    try {
      outputs = produced.map(download);
    } finally {
      for (const t of produced) t.dispose();
    }
  } finally {
    for (const t of tensors) t.dispose();
  }
  return { outputs, leaked: gpu.memoryStats().inUseBytes - before };
}
