import type { Command } from 'commander';
import { runDoctor, type Check } from '../doctor/index.js';
import { loadUpstreams } from '../backends/index.js';

const MARK: Record<Check['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: '--  ' };

/** One line of the report: status, name, what was found, and the fix when something is wrong. */
export const doctorLine = (c: Check) => `${MARK[c.status]} ${c.name}: ${c.detail}${c.fix ? ` -> fix: ${c.fix}` : ''}`;

/** `gengate doctor [--peer URL ...]`: exits 1 when a check failed, 0 otherwise (warnings included). */
export function addDoctorCommand(program: Command, act: (fn: () => Promise<void>) => Promise<void>, out: (text: string) => void): void {
  program
    .command('doctor')
    .description(
      'check the settings, database and migrations, Redis, the file store, ffmpeg, each upstream route, clocks and permissions; one line each with a fix',
    )
    .option('--peer <url>', 'another GenGate process to compare clocks with (repeat for more)', (v: string, all: string[]) => [...all, v], [])
    .action((opts: { peer: string[] }) =>
      act(async () => {
        const checks = await runDoctor(process.env, {
          peers: opts.peer,
          blobs: async (config) => (await import('../services.js')).blobStore(config),
          routeDefaults: async () =>
            Object.fromEntries(Object.entries((await loadUpstreams()).BACKEND_KINDS_BUILT).map(([kind, k]) => [kind, k.defaultBaseUrl ?? ''])),
        });
        for (const c of checks) out(doctorLine(c));
        const failed = checks.filter((c) => c.status === 'fail').length;
        const warned = checks.filter((c) => c.status === 'warn').length;
        out(failed ? `${failed} failed, ${warned} to look at` : warned ? `all passed, ${warned} to look at` : 'all passed');
        if (failed) process.exitCode = 1;
      }),
    );
}
