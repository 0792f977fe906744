import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tools the machine lacks: one loud notice (or, under TEST_NO_SKIP=1, an error); a folder for the console build of this run.
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: ['default', './test/helpers/no-skip-reporter.ts'],
  },
});
