import { describe } from 'vitest';
import { hipRuntimeAvailable } from './hip-available.js';
import { compileEach } from './compile-portable.js';

// Every portable binary specialisation through the real hiprtc for gfx90a (wave64).
describe.skipIf(!hipRuntimeAvailable)('hiprtc compiles the portable binary kernels for gfx90a', () => {
  compileEach('gfx90a', ['binary.cu']);
});
