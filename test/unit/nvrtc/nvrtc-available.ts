import { openNvrtc } from '../../../src/nvrtc/library.js';

/**
 * Whether a real NVRTC loads here (CI installs Debian's libnvrtc11.2). Suites
 * that compile skip cleanly without one, so `npm test` passes anywhere.
 */
export const nvrtcAvailable: boolean = (() => {
  try {
    openNvrtc();
    return true;
  } catch {
    return false;
  }
})();
