import { defineConfig } from 'vitest/config';

/**
 * The load tests: each runs several `gengate serve` processes flat out. They run after the rest,
 * one at a time, so they do not starve each other or the files beside them (decision 0024).
 */
const LOAD = ['test/chaos/chaos.test.ts', 'test/scale/multi-process.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Limits only so a hang fails its test instead of the run: CI's two cores run four files at once,
    // several starting processes, so a test there takes several times what it takes on a quiet
    // machine. Tests that start processes have 240 s (test/helpers/cli.ts); hooks outlast a
    // server's start bound (SERVE_START_MS).
    testTimeout: 60_000,
    hookTimeout: 150_000,
    // Tools the machine lacks: one loud notice (or, under TEST_NO_SKIP=1, an error); a folder for the console build of this run.
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: ['default', './test/helpers/no-skip-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: LOAD,
          // Files run side by side, each in its own process: they mostly wait (on servers, timers,
          // databases and child processes), so four at once keep two cores busy. Files share no
          // state: databases, ports, temp folders and Redis keys are their own (README "Tests").
          maxWorkers: 4,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'load', include: LOAD, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
