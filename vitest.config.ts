import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'gpu',
          include: ['test/gpu/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          // One GPU, one process: tests share the device and its primary context.
          fileParallelism: false,
          // On a GPU, the kernels the tests use compile first, on every core (nothing without one).
          globalSetup: ['test/gpu/warmup-setup.ts'],
        },
      },
      {
        test: {
          // Every registered backend this machine has (the others skip with their reason).
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          // GPU backends share the device and its primary context, as in the gpu project.
          fileParallelism: false,
          globalSetup: ['test/gpu/warmup-setup.ts'],
        },
      },
    ],
  },
});
