/**
 * `backend: 'metal'`: WebGPU on Apple's Metal, through Dawn, on macOS. It is the WebGPU backend
 * restricted to Metal adapters, so `auto` (which tries WebGPU), the support table and the
 * conformance suite leave it out; elsewhere it is unavailable with the reason.
 */
import { BackendUnavailableError, type BackendRegistration } from '../backend/registration.js';
import { WEBGPU_UNSUPPORTED } from '../webgpu/support.js';
import { describeWebGpu, openWebGpu, probeWebGpu, type WebGpuProbe } from '../webgpu/registration.js';

/** Why Metal cannot be used on this platform, or undefined on macOS. */
export function metalUnavailableReason(platform: NodeJS.Platform = process.platform): string | undefined {
  return platform === 'darwin' ? undefined : `Metal exists only on macOS (this is ${platform})`;
}

/** Metal's availability: the WebGPU probe restricted to Metal on macOS. */
export async function probeMetal(): Promise<{ backend: WebGpuProbe; devices: Awaited<ReturnType<typeof probeWebGpu>>['devices'] }> {
  const reason = metalUnavailableReason();
  if (reason !== undefined) return { backend: { available: false, reason, adapter: null, adapters: [] }, devices: [] };
  return probeWebGpu({ requireBackend: 'metal' });
}

export const metalRegistration: BackendRegistration<'metal', WebGpuProbe> = {
  kind: 'metal',
  title: 'Metal',
  aliasOf: 'webgpu',
  unsupported: WEBGPU_UNSUPPORTED,
  probe: probeMetal,
  describe: describeWebGpu,
  async open(options) {
    const reason = metalUnavailableReason();
    if (reason !== undefined) throw new BackendUnavailableError('metal', reason);
    return openWebGpu('metal', options, { requireBackend: 'metal' });
  },
};
