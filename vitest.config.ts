import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Test files run side by side, each in its own process: they mostly wait (on servers, timers,
    // databases and child processes), so four at once keep two cores busy. Files share no state:
    // databases, ports, temp folders and Redis keys are their own (README "Tests").
    // VITEST_MAX_WORKERS overrides it.
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tools the machine lacks: one loud notice (or, under TEST_NO_SKIP=1, an error); a folder for the console build of this run.
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: ['default', './test/helpers/no-skip-reporter.ts'],
  },
});
