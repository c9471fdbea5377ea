import { describe } from 'vitest';
import { hipRuntimeAvailable } from './hip-available.js';
import { compileEach } from './compile-portable.js';

// Every portable elementwise specialisation through the real hiprtc for gfx90a (wave64).
describe.skipIf(!hipRuntimeAvailable)('hiprtc compiles the portable elementwise kernels for gfx90a', () => {
  compileEach('gfx90a', ['unary.cu', 'activation_grad.cu', 'fill.cu', 'cast.cu', 'random.cu', 'transpose.cu']);
});
