import type { Reporter, TestModule } from 'vitest/node';
import { NO_SKIP } from './tools.js';

/**
 * Under TEST_NO_SKIP=1 (.ci/run) a run with any skipped test fails, whatever skipped it (a missing
 * tool, a stray `.skip`, `skipIf`): CI runs every test or says which did not run. Meant for whole
 * runs: a name filter (-t) skips tests too.
 */
export default class NoSkipReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (!NO_SKIP) return;
    const skipped: string[] = [];
    for (const m of modules) {
      for (const t of m.children.allTests()) if (t.result().state === 'skipped') skipped.push(`${m.relativeModuleId} > ${t.fullName}`);
    }
    if (!skipped.length) return;
    process.stderr.write(`\nTEST_NO_SKIP=1, but ${skipped.length} test(s) skipped:\n${skipped.map((s) => `  - ${s}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}
