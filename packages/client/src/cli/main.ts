#!/usr/bin/env node
/**
 * The client commands of `gengate` (docs/cli.md): run, tasks, upload, balance, login. They talk to a
 * GenGate server over HTTP through the SDK only: no server settings, no database. The server's
 * `gengate` binary hands these commands here; the package installs this file as `gengate-client`.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { balance, login, run, tasks, upload } from './commands.js';
import { exitCodeOf, UsageError } from './exit.js';
import { processIo, type Io } from './output.js';

export const CLIENT_COMMANDS = ['run', 'tasks', 'upload', 'balance', 'login'] as const;

export const USAGE = `Client commands (talk to a GenGate server over HTTP; docs/cli.md):
  gengate login [--key KEY] [--base-url URL]      keep the key and address (config folder, mode 0600)
  gengate run MODEL [--prompt TEXT] [--set key=value]... [--file [field=]PATH]... [--out DIR] [--timeout S]
  gengate tasks ls [--state S] [--limit N] [--all] | get ID | cancel ID | wait ID [--out DIR]
  gengate upload FILE...
  gengate balance
Every command takes --json (machine-readable output), --key and --base-url.`;

function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c: string) => (text += c));
    process.stdin.on('end', () => resolve(text));
  });
}

/** Runs one client command; resolves with the exit code (docs/cli.md). */
export async function main(argv: string[], io: Io = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, ...args] = argv;
  const json = args.includes('--json');
  try {
    if (args.includes('--help') || args.includes('-h') || command === undefined) {
      io.out(`${USAGE}\n`);
      return 0;
    }
    if (command === 'run') await run(args, io, env);
    else if (command === 'tasks') await tasks(args, io, env);
    else if (command === 'upload') await upload(args, io, env);
    else if (command === 'balance') await balance(args, io, env);
    else if (command === 'login') await login(args, io, env, readStdin);
    else throw new UsageError(`unknown command "${command}"\n${USAGE}`);
    return 0;
  } catch (e) {
    const code = exitCodeOf(e);
    const message = e instanceof Error ? e.message : String(e);
    if (json) {
      const fields =
        e instanceof Error
          ? { error: (e as { error?: string }).error ?? e.name, status: (e as { status?: number }).status, requestId: (e as { requestId?: string }).requestId }
          : {};
      io.out(`${JSON.stringify({ ok: false, exitCode: code, message, ...fields })}\n`);
    }
    io.err(`gengate: ${code === 1 && e instanceof Error ? (e.stack ?? message) : message}\n`);
    return code;
  }
}

/** Run as the program itself (the `gengate-client` bin, a symlink npm made, or `node main.js`), not imported by `gengate`. */
function isProgram(): boolean {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? '')).href;
  } catch {
    return false;
  }
}

if (isProgram()) {
  process.exitCode = await main(process.argv.slice(2));
}
