import { describe } from 'vitest';
import { hipRuntimeAvailable } from './hip-available.js';
import { compileEach } from './compile-portable.js';

// Every portable reduce-rows specialisation through the real hiprtc for gfx90a (wave64).
describe.skipIf(!hipRuntimeAvailable)('hiprtc compiles the portable reduce-rows kernels for gfx90a', () => {
  compileEach('gfx90a', ['reduce.cu', 'softmax.cu', 'layernorm.cu']);
});
