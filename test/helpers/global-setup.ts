import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildSources } from './source-build.js';
import { NO_SKIP, TOOLS, notice, present, type Tool } from './tools.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder of this run (removed at its end) where the console is built once (test/helpers/console-build.ts). */
    consoleBuildRoot: string;
    /** The sources of this run, compiled once for the processes tests start (test/helpers/source-build.ts). */
    sourceBuild: string;
  }
}

/**
 * Once per `vitest run`, before any test file: says loudly which parts of the suite this machine
 * skips and what to install for them (again at the end, where a reader of the output looks), or,
 * under TEST_NO_SKIP=1 (.ci/run), fails the run before it starts when a part is missing.
 */
export default function setup(project: TestProject): () => void {
  const missing = (Object.keys(TOOLS) as Tool[]).filter((t) => !present(t));
  if (missing.length && NO_SKIP) {
    throw new Error(`TEST_NO_SKIP=1, so nothing may skip, but:\n${missing.map((t) => `  - ${TOOLS[t].missing()}: install ${TOOLS[t].install}`).join('\n')}`);
  }
  const box = missing.length
    ? [
        '',
        '*'.repeat(100),
        `*** NOTICE: this run SKIPS ${missing.length} part(s) of the suite (README "Tests"; TEST_NO_SKIP=1 makes these errors):`,
        ...missing.map((t) => `***   - ${notice(t)}`),
        '*'.repeat(100),
        '',
      ].join('\n')
    : '';
  // Each project of vitest.config.ts runs this setup: the notice is printed by the first to start and the last to end.
  const run = ((globalThis as { gengateRun?: { projects: number; root: string; sources: string } }).gengateRun ??= {
    projects: 0,
    root: mkdtempSync(path.join(tmpdir(), 'gengate-run-')),
    sources: buildSources(process.cwd()),
  });
  if (run.projects++ === 0 && box) process.stdout.write(`${box}\n`);
  project.provide('consoleBuildRoot', run.root);
  project.provide('sourceBuild', run.sources);
  return () => {
    if (--run.projects > 0) return;
    rmSync(run.root, { recursive: true, force: true });
    rmSync(run.sources, { recursive: true, force: true });
    delete (globalThis as { gengateRun?: unknown }).gengateRun;
    if (box) process.stdout.write(`${box}\n`);
  };
}
