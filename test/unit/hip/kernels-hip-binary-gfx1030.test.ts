import { describe } from 'vitest';
import { hipRuntimeAvailable } from './hip-available.js';
import { compileEach } from './compile-portable.js';

// Every portable binary specialisation through the real hiprtc for gfx1030 (wave32).
describe.skipIf(!hipRuntimeAvailable)('hiprtc compiles the portable binary kernels for gfx1030', () => {
  compileEach('gfx1030', ['binary.cu']);
});
