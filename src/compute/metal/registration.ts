/**
 * Metal (macOS): detected, with no backend behind it yet; `auto` skips it with the reason and an
 * explicit `backend: 'metal'` is refused with it.
 */
import { BackendUnavailableError, type BackendProbe, type BackendRegistration } from '../backend/registration.js';

/** Why Metal cannot be used here. */
export function metalUnavailableReason(): string {
  return process.platform === 'darwin'
    ? 'this version of gpucompute has no Metal backend'
    : `Metal exists only on macOS (this is ${process.platform})`;
}

/** Metal's availability. */
export function probeMetal(): BackendProbe {
  return { available: false, reason: metalUnavailableReason() };
}

export const metalRegistration: BackendRegistration<'metal', BackendProbe> = {
  kind: 'metal',
  title: 'Metal',
  notYetAvailable: 'there is no Metal backend yet',
  unsupported: {},
  probe: () => ({ backend: probeMetal(), devices: [] }),
  describe: (metal) => ({ summary: metal.reason ?? '', details: [] }),
  async open() {
    throw new BackendUnavailableError('metal', metalUnavailableReason());
  },
};
