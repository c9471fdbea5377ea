import { describe } from 'vitest';
import { hipRuntimeAvailable } from './hip-available.js';
import { compileEach } from './compile-portable.js';

// The portable training kernels (one-hot, the fused optimizer step) through the real hiprtc for gfx1030 (wave32).
describe.skipIf(!hipRuntimeAvailable)('hiprtc compiles the training kernels for gfx1030', () => {
  compileEach('gfx1030', ['one_hot.cu', 'optimizer.cu']);
});
