/// <reference types="@webgpu/types" />
/**
 * Running a kernel: the views' segments decide the binding layout (one slot per distinct
 * segment, see `wgsl.ts`), the pipeline of that specialisation and layout comes from a cache
 * (built once: shader module, pipeline, with Dawn's errors turned into a typed one), the bind
 * group of those segments comes from another (dropped when a segment is), and the dispatch is
 * recorded into the open batch with its parameters in the uniform arena.
 *
 * Bind-group layouts depend only on the slot count: slots 0..n-1 read_write storage, slot n the
 * parameter window with a dynamic offset.
 */
import { dtypeSize } from '../core/dtype.js';
import type { Logger } from '../core/logger.js';
import type { TensorView } from '../core/view.js';
import { PARAM_WINDOW, type CommandBatch } from './command-batch.js';
import type { WebGpuDevice } from './webgpu-device.js';
import { WebGpuError } from './webgpu-errors.js';
import type { Segment, WebGpuBuffer } from './webgpu-memory.js';
import { composeWgsl, defaultWgslDir, uniformFields, type KernelSpec } from './wgsl.js';

/** Workgroup counts of one dispatch. */
export type Groups = readonly [number, number?, number?];

/** A pipeline and how its parameters are written. */
interface Pipeline {
  readonly pipeline: GPUComputePipeline;
  readonly slots: number;
  readonly fieldTypes: readonly ('u32' | 'i32' | 'f32')[];
}

/** Most slot indices a layout key spells with one character each. */
const SLOT_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Builds, caches and records kernels on one device. */
export class Dispatcher {
  readonly #dev: WebGpuDevice;
  readonly #batch: CommandBatch;
  readonly #dir: string;
  /** f16-only slots use native f16 storage (the device has shader-f16 and the backend allows it). */
  readonly #nativeF16: boolean;
  readonly #logger: Logger | undefined;
  readonly #layouts: { group: GPUBindGroupLayout; pipeline: GPUPipelineLayout }[] = [];
  readonly #pipelines = new Map<string, Pipeline>();
  readonly #bindGroups = new Map<string, GPUBindGroup>();
  readonly #groupsBySegment = new Map<number, string[]>();
  /** Scratch of one dispatch (reused: this runs for every op). */
  readonly #segments: Segment[] = [];
  readonly #slots: number[] = [];
  readonly #offsets: number[] = [0];
  /** Pipelines built so far (tests and logs). */
  compiled = 0;

  constructor(dev: WebGpuDevice, batch: CommandBatch, nativeF16: boolean, logger?: Logger, dir: string = defaultWgslDir()) {
    this.#dev = dev;
    this.#batch = batch;
    this.#logger = logger;
    this.#nativeF16 = nativeF16 && dev.features.has('shader-f16');
    this.#dir = dir;
  }

  /** Whether f16 tensors use native f16 storage where their slot holds only f16. */
  get nativeF16(): boolean {
    return this.#nativeF16;
  }

  /** The largest workgroup count per grid dimension. */
  get maxGroups(): number {
    return this.#dev.limits.maxComputeWorkgroupsPerDimension;
  }

  /**
   * Records `spec` over `views` (one per role, in order) with `values` (one per parameter, in
   * order) on `groups` workgroups.
   * @throws WebGpuError when Dawn refuses to build the kernel (with its message).
   */
  run(spec: KernelSpec, views: readonly TensorView[], values: readonly number[], groups: Groups): void {
    const segments = this.#segments;
    const slots = this.#slots;
    segments.length = 0;
    slots.length = 0;
    let layoutKey = '';
    for (const view of views) {
      const segment = (view.buffer as WebGpuBuffer).segment;
      let slot = segments.indexOf(segment);
      if (slot < 0) {
        slot = segments.length;
        segments.push(segment);
      }
      slots.push(slot);
      layoutKey += SLOT_DIGITS[slot];
    }
    const pipeline = this.#pipeline(spec, slots, layoutKey);
    const bindGroup = this.#bindGroup(segments);

    const batch = this.#batch;
    const types = pipeline.fieldTypes;
    const base = batch.reserveParams(types.length * 4);
    let w = base >>> 2;
    batch.u32[w++] = 0;
    for (const view of views) {
      const buffer = view.buffer as WebGpuBuffer;
      batch.u32[w++] = buffer.byteOffset / dtypeSize[view.dtype] + view.offset;
    }
    for (let i = 0; i < values.length; i++, w++) {
      const type = types[1 + views.length + i];
      if (type === 'f32') batch.f32[w] = values[i]!;
      else if (type === 'i32') batch.i32[w] = values[i]!;
      else batch.u32[w] = values[i]!;
    }
    const pass = batch.pass(spec.op);
    batch.setPipeline(pass, pipeline.pipeline);
    this.#offsets[0] = base;
    pass.setBindGroup(0, bindGroup, this.#offsets);
    pass.dispatchWorkgroups(groups[0], groups[1] ?? 1, groups[2] ?? 1);
  }

  /** Drops the bind groups that hold `segment` (it is being destroyed). */
  evict(segment: Segment): void {
    const keys = this.#groupsBySegment.get(segment.id);
    if (!keys) return;
    this.#groupsBySegment.delete(segment.id);
    for (const key of keys) this.#bindGroups.delete(key);
  }

  /** The pipeline of `spec` for a layout, built on first use. */
  #pipeline(spec: KernelSpec, slots: readonly number[], layoutKey: string): Pipeline {
    const key = `${spec.key}#${layoutKey}`;
    const cached = this.#pipelines.get(key);
    if (cached) return cached;
    const slotCount = slots.reduce((m, s) => Math.max(m, s + 1), 0);
    const { device } = this.#dev;
    const label = `${spec.op}: ${key}`;
    const start = performance.now();
    const mark = this.#dev.errorMark();
    const module = device.createShaderModule({ code: composeWgsl(spec, slots, this.#nativeF16, this.#dir), label });
    const pipeline = device.createComputePipeline({
      layout: this.#layout(slotCount).pipeline,
      compute: { module, entryPoint: 'main' },
      label,
    });
    const errors = this.#dev.takeErrorsSince(mark);
    if (errors.length > 0) throw new WebGpuError(spec.op, errors[0]!.kind, `${errors[0]!.message}\n(kernel ${key})`);
    this.compiled++;
    this.#logger?.debug(`webgpu: built ${key} in ${(performance.now() - start).toFixed(1)} ms`);
    const built: Pipeline = { pipeline, slots: slotCount, fieldTypes: uniformFields(spec).map(([, t]) => t) };
    this.#pipelines.set(key, built);
    return built;
  }

  #layout(slots: number): { group: GPUBindGroupLayout; pipeline: GPUPipelineLayout } {
    let layout = this.#layouts[slots];
    if (!layout) {
      const { device, globals } = this.#dev;
      const entries: GPUBindGroupLayoutEntry[] = [];
      for (let s = 0; s < slots; s++) entries.push({ binding: s, visibility: globals.GPUShaderStage.COMPUTE, buffer: { type: 'storage' } });
      entries.push({ binding: slots, visibility: globals.GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true } });
      const group = device.createBindGroupLayout({ entries, label: `gpucompute ${slots} slots` });
      layout = { group, pipeline: device.createPipelineLayout({ bindGroupLayouts: [group] }) };
      this.#layouts[slots] = layout;
    }
    return layout;
  }

  #bindGroup(segments: readonly Segment[]): GPUBindGroup {
    let key = '';
    for (const s of segments) key += `${s.id},`;
    let group = this.#bindGroups.get(key);
    if (group) return group;
    const entries: GPUBindGroupEntry[] = segments.map((s, i) => ({ binding: i, resource: { buffer: s.buffer } }));
    entries.push({ binding: segments.length, resource: { buffer: this.#batch.arena, size: PARAM_WINDOW } });
    group = this.#dev.device.createBindGroup({ layout: this.#layout(segments.length).group, entries });
    this.#bindGroups.set(key, group);
    for (const s of segments) {
      let keys = this.#groupsBySegment.get(s.id);
      if (!keys) this.#groupsBySegment.set(s.id, (keys = []));
      keys.push(key);
    }
    return group;
  }
}
