/**
 * Dawn's bounds checks (`findAdapter`): off on a hardware adapter unless asked for, on for a
 * software one, on when the option or GPUCOMPUTE_WEBGPU_ROBUSTNESS asks; checked on a fake Dawn
 * that records the flags of each instance, and on this machine's real adapter where there is one.
 */
import { describe, expect, it } from 'vitest';
import { findAdapter, robustnessWanted, webgpuAdapterInfo, type WebGpuAdapterOptions } from '../../../src/compute/webgpu/adapter.js';
import { skipReason, suite } from './setup.js';

/** A Dawn module whose adapters are software ones or not; `created` holds each instance's flags. */
function fakeDawn(software: boolean) {
  const created: string[][] = [];
  const module = {
    globals: {},
    create(flags: string[]) {
      created.push(flags);
      return {
        requestAdapter: () => Promise.resolve({ info: { isFallbackAdapter: software }, features: new Set(), limits: {} }),
      };
    },
  };
  return { created, importer: () => Promise.resolve(module) };
}

async function find(software: boolean, options: WebGpuAdapterOptions = {}) {
  const dawn = fakeDawn(software);
  const found = await findAdapter({ requireBackend: 'vulkan', ...options, importer: dawn.importer });
  found.instance.release();
  return { robustness: found.robustness, created: dawn.created, used: found.instance.flags };
}

describe("Dawn's bounds checks", () => {
  it('are off on a hardware adapter by default: its instance has disable_robustness', async () => {
    const { robustness, created, used } = await find(false, { robustness: false });
    expect(robustness).toBe(false);
    expect(created).toHaveLength(1);
    expect(used).toContain('enable-dawn-features=disable_robustness');
  });

  it('stay on for a software adapter: it is asked for again from an instance without the toggle', async () => {
    const { robustness, created, used } = await find(true, { robustness: false });
    expect(robustness).toBe(true);
    expect(created).toHaveLength(2);
    expect(used.join(' ')).not.toContain('disable_robustness');
  });

  it('stay on when asked for, and the toggles a caller names are kept beside the one added', async () => {
    const asked = await find(false, { robustness: true });
    expect(asked.robustness).toBe(true);
    expect(asked.used.join(' ')).not.toContain('disable_robustness');
    const withToggles = await find(false, { robustness: false, enableToggles: ['use_dxc'] });
    expect(withToggles.used).toContain('enable-dawn-features=use_dxc,disable_robustness');
  });

  it('are reported off where the caller turns them off by the toggle itself', async () => {
    const { robustness, used } = await find(false, { robustness: true, enableToggles: ['disable_robustness'] });
    expect(used).toContain('enable-dawn-features=disable_robustness');
    expect(robustness).toBe(false);
  });

  it('follow GPUCOMPUTE_WEBGPU_ROBUSTNESS where the option is not given', () => {
    expect(robustnessWanted({}, {})).toBe(false);
    expect(robustnessWanted({}, { GPUCOMPUTE_WEBGPU_ROBUSTNESS: '1' })).toBe(true);
    expect(robustnessWanted({}, { GPUCOMPUTE_WEBGPU_ROBUSTNESS: '0' })).toBe(false);
    expect(robustnessWanted({ robustness: false }, { GPUCOMPUTE_WEBGPU_ROBUSTNESS: '1' })).toBe(false);
  });
});

describe.skipIf(skipReason)(suite("Dawn's bounds checks on this machine's adapter"), () => {
  it('are on exactly where the adapter is a software one (or the environment asks)', async () => {
    const info = await webgpuAdapterInfo();
    expect(info.robustness).toBe(info.fallback || process.env.GPUCOMPUTE_WEBGPU_ROBUSTNESS === '1');
  });
});
