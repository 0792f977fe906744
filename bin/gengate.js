#!/usr/bin/env node
// Runs the compiled program in dist/ (built by `npm run build`, which `npm install` and `npm ci` run
// as the prepare step): no TypeScript is transpiled at start. `npm run dev` runs the sources instead.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('gengate: the compiled program (dist/main.js) is missing; run `npm run build` (npm install runs it)\n');
  process.exit(1);
}
await import(main.href);
