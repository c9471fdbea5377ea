import { describe } from 'vitest';
import { hipRuntimeAvailable } from './hip-available.js';
import { compileEach } from './compile-portable.js';

// Every portable elementwise specialisation through the real hiprtc for gfx1030 (wave32).
describe.skipIf(!hipRuntimeAvailable)('hiprtc compiles the portable elementwise kernels for gfx1030', () => {
  compileEach('gfx1030', ['unary.cu', 'activation_grad.cu', 'fill.cu', 'cast.cu', 'random.cu', 'transpose.cu']);
});
