/// <reference types="@webgpu/types" />
/**
 * Whether the row kernels may reduce with subgroup shuffles (`kernels/wgsl/team-reduce.wgsl`).
 *
 * WebGPU does not promise which invocations share a subgroup, nor a fixed subgroup size. The
 * shuffles assume that subgroup k holds invocations [k·S, (k+1)·S) of a workgroup for one size
 * S, which real drivers do; {@link probeSubgroups} checks exactly that on the device when the
 * backend opens (one small dispatch), and the kernels use workgroup memory where it fails.
 */
import type { WebGpuDevice } from './webgpu-device.js';
import type { WebGpuOpContext } from './op-context.js';

/** The largest workgroup the kernels that shuffle use (the probe checks the layout there). */
export const MAX_TEAM_WG = 1024;

/** The largest workgroup a kernel that shuffles may use on this device (the size the probe ran). */
export function teamWorkgroupLimit(dev: WebGpuDevice): number {
  return Math.min(MAX_TEAM_WG, dev.limits.maxComputeInvocationsPerWorkgroup, dev.limits.maxComputeWorkgroupSizeX);
}

const probeSource = (wg: number) => `enable subgroups;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(${wg})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) size: u32) {
  // Each invocation reports its size, and whether its subgroup neighbour 0 is the invocation S·⌊lid/S⌋.
  let first = subgroupBroadcastFirst(lid);
  out[lid] = size | select(0u, 0x80000000u, first == lid - sid && sid == lid % size);
}`;

/**
 * The subgroup size S when every subgroup of a workgroup of {@link teamWorkgroupLimit} (256 to
 * 1024 invocations) is the consecutive run
 * [k·S, (k+1)·S), else undefined (no subgroups, varying sizes, or another layout).
 */
export async function probeSubgroups(dev: WebGpuDevice): Promise<number | undefined> {
  if (!dev.features.has('subgroups')) return undefined;
  const { device, globals } = dev;
  const { GPUBufferUsage, GPUMapMode } = globals;
  const wg = teamWorkgroupLimit(dev);
  const bytes = wg * 4;
  const mark = dev.errorMark();
  const out = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: probeSource(wg) }), entryPoint: 'main' } });
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }] });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(out, 0, staging, 0, bytes);
    device.queue.submit([encoder.finish()]);
    if (dev.takeErrorsSince(mark).length > 0) return undefined;
    await dev.pump.capture(() => staging.mapAsync(GPUMapMode.READ));
    const words = new Uint32Array(staging.getMappedRange().slice(0));
    staging.unmap();
    const size = words[0]! & 0x7fffffff;
    const linear = words.every((w) => (w & 0x7fffffff) === size && (w & 0x80000000) !== 0);
    return linear && size > 0 && wg % size === 0 ? size : undefined;
  } catch {
    return undefined;
  } finally {
    dev.takeErrorsSince(mark);
    out.destroy();
    staging.destroy();
  }
}

/** How a kernel with teams of `team` invocations reduces: with shuffles of subgroups of `sg`, or in workgroup memory. */
export function teamConfig(ctx: WebGpuOpContext, team: number): { subgroups: boolean; sg: number } {
  const sg = ctx.subgroupSize;
  if (sg === undefined) return { subgroups: false, sg: 1 };
  // Teams must tile subgroups, or subgroups teams.
  const fits = team % sg === 0 || sg % team === 0;
  return fits ? { subgroups: true, sg } : { subgroups: false, sg: 1 };
}
