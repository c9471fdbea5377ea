/** The HIP backend's registration: AMD GPUs through the HIP runtime, portable kernels compiled by hiprtc. */
import { BackendUnavailableError, libraryLines, oneLine, plural, type BackendRegistration } from '../backend/registration.js';
import { probeHip, type HipProbe } from './probe.js';
import { HIP_UNSUPPORTED } from './support.js';

export const hipRegistration: BackendRegistration<'hip', HipProbe> = {
  kind: 'hip',
  title: 'HIP',
  unsupported: HIP_UNSUPPORTED,
  probe: async () => probeHip(),
  describe(hip) {
    const details = libraryLines('libamdhip64', hip.library);
    if (hip.runtimeVersion) details.push(`HIP runtime ${hip.runtimeVersion}`);
    return { summary: hip.available ? plural(hip.deviceCount ?? 0, 'device') : (hip.reason ?? 'unknown reason'), details };
  },
  async open({ device, poolLimitBytes, logger }) {
    const { backend: probe } = probeHip();
    if (!probe.available) throw new BackendUnavailableError('hip', probe.reason ?? 'unknown reason');
    try {
      const { createHipBackend } = await import('./hip-backend.js');
      return createHipBackend({ device, logger, ...(poolLimitBytes === undefined ? {} : { poolLimitBytes }) });
    } catch (err) {
      throw new BackendUnavailableError('hip', oneLine(err), err);
    }
  },
};
