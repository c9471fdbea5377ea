import { describe } from 'vitest';
import { hipRuntimeAvailable } from './hip-available.js';
import { compileEach } from './compile-portable.js';

// The portable training kernels (one-hot, the fused optimizer step) through the real hiprtc for gfx90a (wave64).
describe.skipIf(!hipRuntimeAvailable)('hiprtc compiles the training kernels for gfx90a', () => {
  compileEach('gfx90a', ['one_hot.cu', 'optimizer.cu']);
});
