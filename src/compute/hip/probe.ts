/**
 * What this machine has for the HIP backend, as plain data: the runtime library, hipInit, the
 * device count and the devices. Serves backend selection (the reason `auto` skips HIP),
 * `selectDevice` and `gpucompute info`; never throws for a missing or failing runtime.
 */
import { HipDevice } from '../../hip/device.js';
import { hipResultDescription } from '../../hip/hip-result.js';
import { formatHipVersion, hipProbeFunctions as hip, openHipRuntime } from '../../hip/runtime.js';
import { errorMessage, oneLine, probeLibrary, type BackendProbe, type CallProbe, type LibraryProbe, type ProbedDevice } from '../backend/registration.js';
import { hipDeviceInfo } from './device-info.js';

/** The HIP backend (AMD GPUs through ROCm). */
export interface HipProbe extends BackendProbe {
  library: LibraryProbe;
  init: CallProbe | null;
  /** hipGetDeviceCount's outcome; a failure here (hipErrorNoDevice) is the usual "no AMD GPU". */
  deviceCountCall: CallProbe | null;
  deviceCount: number | null;
  /** HIP runtime version, `major.minor.patch`. */
  runtimeVersion: string | null;
  driverVersion: string | null;
}

/** The HIP runtime and its devices; the backend is available when the runtime sees a device. */
export function probeHip(): { backend: HipProbe; devices: ProbedDevice[] } {
  const backend: HipProbe = {
    available: false,
    reason: null,
    library: probeLibrary(openHipRuntime),
    init: null,
    deviceCountCall: null,
    deviceCount: null,
    runtimeVersion: null,
    driverVersion: null,
  };
  const devices: ProbedDevice[] = [];
  if (!backend.library.found) {
    try {
      openHipRuntime();
    } catch (err) {
      backend.reason = `no HIP runtime: ${oneLine(err)}`;
    }
    return { backend, devices };
  }
  try {
    inspect(backend, devices);
  } catch (err) {
    // A runtime lacking one of these entry points (MissingSymbolError) is reported, not fatal.
    backend.reason = `the HIP runtime at ${backend.library.path} failed: ${errorMessage(err)}`;
  }
  return { backend, devices };
}

function inspect(backend: HipProbe, devices: ProbedDevice[]): void {
  const version = new Int32Array(1);
  backend.runtimeVersion = hip.hipRuntimeGetVersion(version) === 0 ? formatHipVersion(version[0]!) : null;
  backend.driverVersion = hip.hipDriverGetVersion(version) === 0 ? formatHipVersion(version[0]!) : null;
  backend.init = hipCall('hipInit', hip.hipInit(0) as number);
  const count = new Int32Array(1);
  backend.deviceCountCall = hipCall('hipGetDeviceCount', hip.hipGetDeviceCount(count) as number);
  if (!backend.deviceCountCall.ok || count[0] === 0) {
    // hipInit's code is not telling here (ROCm 5.2 answers hipErrorInvalidDevice without a GPU); the count's is.
    const initNote = backend.init.ok ? '' : `hipInit returned ${backend.init.name} (${backend.init.code}), `;
    const call = backend.deviceCountCall;
    const answer = call.ok ? '0 devices' : `${call.name} (${call.code}: ${call.description})`;
    backend.reason = `no HIP device: ${initNote}hipGetDeviceCount returned ${answer} (runtime ${backend.library.path})`;
    if (call.ok) backend.deviceCount = 0;
    return;
  }
  backend.deviceCount = count[0]!;
  for (let ordinal = 0; ordinal < backend.deviceCount; ordinal++) devices.push(describeDevice(ordinal));
  backend.available = true;
}

/** The full record through the safe tier, else what the basic calls can still read. */
function describeDevice(ordinal: number): ProbedDevice {
  try {
    return { info: hipDeviceInfo(HipDevice.get(ordinal)) };
  } catch (err) {
    const partial: Extract<ProbedDevice, { error: string }>['partial'] = { backend: 'hip', ordinal };
    const handle = new Int32Array(1);
    const name = Buffer.alloc(256);
    const bytes = new BigUint64Array(1);
    if ((hip.hipDeviceGet(handle, ordinal) as number) === 0) {
      if ((hip.hipDeviceGetName(name, name.length, handle[0]!) as number) === 0) partial.deviceName = name.toString('utf8', 0, Math.max(0, name.indexOf(0)));
      if ((hip.hipDeviceTotalMem(bytes, handle[0]!) as number) === 0) partial.totalMemory = Number(bytes[0]!);
    }
    return { partial, error: errorMessage(err) };
  }
}

function hipCall(call: string, code: number): CallProbe {
  return { call, ok: code === 0, code, name: hipErrorName(code), description: hipResultDescription(code) };
}

function hipErrorName(code: number): string {
  try {
    return (hip.hipGetErrorName(code) as string | null) ?? `hipError ${code}`;
  } catch {
    return `hipError ${code}`;
  }
}
