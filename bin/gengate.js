#!/usr/bin/env node
// Runs the compiled program in dist/ (built by `npm run build`, which `npm install` and `npm ci` run
// as the prepare step): no TypeScript is transpiled at start. `npm run dev` runs the sources instead.
// The client commands (run, tasks, upload, balance, login) go straight to the SDK package's compiled
// CLI, so they load nothing of the server (decision 2200).
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
const client = new URL('../packages/client/dist/cli/main.js', import.meta.url);
if (!existsSync(main) || !existsSync(client)) {
  process.stderr.write('gengate: the compiled program (dist/main.js) is missing; run `npm run build` (npm install runs it)\n');
  process.exit(1);
}
const cli = await import(client.href);
if (cli.CLIENT_COMMANDS.includes(process.argv[2])) process.exitCode = await cli.main(process.argv.slice(2));
else await import(main.href);
