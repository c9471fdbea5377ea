import { describe, expectTypeOf, it } from 'vitest';
import type { Context } from '../../../src/driver/context.js';
import type { Device } from '../../../src/driver/device.js';
import type { Event } from '../../../src/driver/event.js';
import type { Kernel } from '../../../src/driver/kernel.js';
import type { Module } from '../../../src/driver/module.js';
import type { Stream } from '../../../src/driver/stream.js';
import type { HipEvent } from '../../../src/hip/event.js';
import type { HipKernel } from '../../../src/hip/kernel.js';
import type { HipModule } from '../../../src/hip/module.js';
import type { HipStream } from '../../../src/hip/stream.js';

// The lower file of each pair names the upper class through an interface the
// upper file merges its class into, so the public types stay the full classes.
// tsc checks these (npm test type-checks test/); at run time they are no-ops.
describe('back references declared by interface merging', () => {
  it('are the full classes', () => {
    expectTypeOf<Context['device']>().toEqualTypeOf<Device>();
    expectTypeOf<Kernel['module']>().toEqualTypeOf<Module>();
    expectTypeOf<Parameters<Event['record']>[0]>().toEqualTypeOf<Stream | undefined>();
    expectTypeOf<HipKernel['module']>().toEqualTypeOf<HipModule>();
    expectTypeOf<Parameters<HipEvent['record']>[0]>().toEqualTypeOf<HipStream>();
  });
});
