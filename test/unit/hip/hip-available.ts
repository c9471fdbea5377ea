import { openHipRuntime } from '../../../src/hip/library.js';

/** Whether a HIP runtime (with hiprtc, as Debian's libamdhip64-5 has it) loads here; CI installs one. */
export const hipRuntimeAvailable = (() => {
  try {
    openHipRuntime();
    return true;
  } catch {
    return false;
  }
})();
