/**
 * What the multi-GPU tests need, probed once: how many CUDA devices answer, whether NCCL loads,
 * and the reason a suite skips (in its title, so the report says why).
 */
import { probeNccl } from '../../../src/compute/cuda/probe.js';
import { Device } from '../../../src/driver/device.js';
import { gpuAvailable } from '../gpu-available.js';

/** CUDA devices this process sees (0 without a driver or GPU). */
export const deviceCount: number = gpuAvailable ? Device.count() : 0;

const nccl = probeNccl();
/** Whether NCCL loaded (libnccl.so.2: system, toolkit, or the nvidia-nccl wheel). */
export const ncclAvailable: boolean = nccl.available;
/** Where NCCL loaded from, or why it did not. */
export const ncclWhere: string = nccl.available ? `NCCL ${nccl.version} from ${nccl.library.path}` : (nccl.reason ?? 'NCCL did not load');

/** Why a suite needing `gpus` GPUs (and NCCL when `needsNccl`) skips here; empty when it runs. */
export function skipReason(gpus: number, needsNccl: boolean): string {
  if (deviceCount < gpus) return `(skipped: needs ${gpus} CUDA GPU${gpus === 1 ? '' : 's'}, this machine has ${deviceCount})`;
  if (needsNccl && !ncclAvailable) return `(skipped: ${ncclWhere})`;
  return '';
}
