import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { guard, unguard } from '../../../src/driver/leak-guard.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

it('releases what collected owners leaked, spares disposed ones, and warns once', async () => {
  const released: string[] = [];
  const warnings: (Error & { code?: string })[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  const kept: object[] = [];
  (() => {
    for (const name of ['a', 'b', 'c']) guard({}, 'DeviceBuffer', () => released.push(name));
    const disposed = {};
    guard(disposed, 'Stream', () => released.push('disposed'));
    unguard(disposed);
    const alive = {};
    guard(alive, 'Event', () => released.push('alive'));
    kept.push(alive);
  })();
  for (let round = 0; round < 50 && released.length < 3; round++) {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await new Promise((resolve) => setTimeout(resolve, 10));
  process.off('warning', onWarning);
  expect(released.sort()).toEqual(['a', 'b', 'c']);
  const leaks = warnings.filter((w) => w.code === 'GPUCOMPUTE_LEAK');
  expect(leaks).toHaveLength(1);
  expect(leaks[0]!.message).toMatch(/^A DeviceBuffer was garbage-collected without dispose\(\)/);
  expect(kept).toHaveLength(1);
});
