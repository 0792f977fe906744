import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/**
 * What the full suite needs beyond Node and `npm install`, and what is skipped without each part.
 * Without a part, the tests that need it skip with one loud notice naming what to install; with
 * TEST_NO_SKIP=1 (set by .ci/run) a missing part fails the run instead, so CI always runs everything.
 * The README's "Tests" section lists the same parts; the global setup (test/helpers/global-setup.ts)
 * prints them all at the start and at the end of a run.
 */
export type Tool = 'postgres' | 'redis' | 'chromium' | 'python' | 'prlimit';

/** TEST_NO_SKIP=1: nothing may skip; a missing part is an error. */
export const NO_SKIP = process.env.TEST_NO_SKIP === '1';

/** Debian's Chromium, driven by playwright-core (test/console/). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The python3 that runs the Python SDK's pytest suite (TEST_PYTHON, default Debian's /usr/bin/python3). */
export const PYTHON = process.env.TEST_PYTHON ?? '/usr/bin/python3';

/** prlimit (util-linux) for the connection-flood test. */
export const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => executable(p));

interface ToolInfo {
  /** What is missing, as the notice says it. */
  missing: () => string;
  /** What to install or set. */
  install: string;
  /** What the suite skips without it. */
  skips: string;
  present: () => boolean;
}

export const TOOLS: Record<Tool, ToolInfo> = {
  postgres: {
    present: () => !!process.env.TEST_DATABASE_URL,
    missing: () => 'TEST_DATABASE_URL is not set',
    install: 'a PostgreSQL server (apt-get install postgresql), then TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test',
    skips: 'the PostgreSQL half of every integration test, the chaos run, the multi-process scale test, wake-ups across processes',
  },
  redis: {
    present: () => !!process.env.TEST_REDIS_URL,
    missing: () => 'TEST_REDIS_URL is not set',
    install: 'a Redis server (apt-get install redis-server), then TEST_REDIS_URL=redis://127.0.0.1:6379',
    skips: 'rate and sign-in limits shared through Redis, the chaos run, the multi-process scale test, wake-ups through Redis',
  },
  chromium: {
    present: () => executable(CHROMIUM),
    missing: () => `no Chromium at ${CHROMIUM}`,
    install: "Debian's Chromium (apt-get install chromium), or CHROMIUM_PATH naming one",
    skips: "the console's browser tests (test/console/)",
  },
  python: {
    present: () => spawnSync(PYTHON, ['-c', 'import httpx, pytest'], { stdio: 'ignore', timeout: 30_000 }).status === 0,
    missing: () => `${PYTHON} cannot import httpx and pytest`,
    install: "Debian's python3 with httpx and pytest (apt-get install python3 python3-httpx python3-pytest), or TEST_PYTHON naming one",
    skips: "the Python SDK's tests (test/clients/python.test.ts)",
  },
  prlimit: {
    present: () => PRLIMIT !== undefined,
    missing: () => 'no prlimit in /usr/bin or /bin',
    install: 'util-linux (apt-get install util-linux)',
    skips: 'the connection-flood test (test/http/connection-flood.test.ts)',
  },
};

const known = new Map<Tool, boolean>();
const told = new Set<Tool>();

/** Whether the part is there (checked once per test process). */
export function present(tool: Tool): boolean {
  let yes = known.get(tool);
  if (yes === undefined) known.set(tool, (yes = TOOLS[tool].present()));
  return yes;
}

/** The notice for a missing part: what is skipped and what to install. */
export function notice(tool: Tool): string {
  const t = TOOLS[tool];
  return `${t.missing()}: SKIPPED ${t.skips}. Install ${t.install}.`;
}

/**
 * Whether the tests that need `tool` run: true when it is there; otherwise a loud notice (once per
 * test file) and false, or, under TEST_NO_SKIP=1, an error that fails the file.
 */
export function needs(tool: Tool): boolean {
  if (present(tool)) return true;
  if (NO_SKIP) throw new Error(`TEST_NO_SKIP=1 and ${TOOLS[tool].missing()}: install ${TOOLS[tool].install}`);
  if (!told.has(tool)) {
    told.add(tool);
    process.stderr.write(`\n*** NOTICE: ${notice(tool)} ***\n\n`);
  }
  return false;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
