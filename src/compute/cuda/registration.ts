/** The CUDA backend's registration: NVIDIA GPUs through the driver API, kernels compiled by NVRTC. */
import { BackendUnavailableError, callLines, libraryLines, oneLine, plural, triedLines, type BackendRegistration } from '../backend/registration.js';
import { probeCuda, type CudaProbe, type NcclProbe, type NvrtcProbe } from './probe.js';

export const cudaRegistration: BackendRegistration<'cuda', CudaProbe> = {
  kind: 'cuda',
  title: 'CUDA',
  unsupported: {},
  probe: async (options) => probeCuda(options),
  describe(cuda) {
    const details = [...libraryLines('libcuda', cuda.library), ...callLines(cuda.init), nvrtcLine(cuda.nvrtc)];
    if (cuda.nvrtc.library.tried.length > 0 && !cuda.nvrtc.library.found) details.push(...triedLines(cuda.nvrtc.library, '  '));
    details.push(ncclLine(cuda.nccl));
    if (cuda.nccl.library.tried.length > 0 && !cuda.nccl.library.found) details.push(...triedLines(cuda.nccl.library, '  '));
    const versions = [cuda.displayDriverVersion && `driver ${cuda.displayDriverVersion}`, cuda.driverVersion && `CUDA ${cuda.driverVersion}`].filter(Boolean);
    const summary = cuda.available
      ? `${plural(cuda.deviceCount ?? 0, 'device')}, ${versions.join(', ')}`
      : `${cuda.reason ?? 'unknown reason'}${versions.length ? ` (${versions.join(', ')})` : ''}`;
    return { summary, details };
  },
  async open({ device, poolLimitBytes, logger }) {
    try {
      // Loaded on demand so CPU-only use never touches the CUDA modules.
      const { createCudaBackend } = await import('./cuda-backend.js');
      return createCudaBackend({ device, logger, ...(poolLimitBytes === undefined ? {} : { poolLimitBytes }) });
    } catch (err) {
      throw new BackendUnavailableError('cuda', oneLine(err), err);
    }
  },
};

function ncclLine(nccl: NcclProbe): string {
  if (!nccl.available) return `NCCL unavailable (multi-GPU collectives need it): ${nccl.reason ?? 'unknown reason'}`;
  return `NCCL ${nccl.version} loaded from ${nccl.library.path}`;
}

function nvrtcLine(nvrtc: NvrtcProbe): string {
  if (!nvrtc.available) return `NVRTC unavailable: ${nvrtc.reason ?? 'unknown reason'}`;
  const archs = nvrtc.supportedArchs;
  const range = archs.length === 0 ? 'no targets' : `targets ${archs[0]} to ${archs[archs.length - 1]} (${archs.length})`;
  return `NVRTC ${nvrtc.version} loaded from ${nvrtc.library.path}, ${range}`;
}
