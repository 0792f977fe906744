import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPublicServer, tsc } from './support.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** The ```ts blocks of docs/sdk.md, with the package import pointed at `target` (the package's sources). */
function blocks(target: string): string[] {
  const text = readFileSync(path.join(ROOT, 'docs/sdk.md'), 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!.replaceAll("from '@gengate/client'", `from '${target}'`));
}

describe('docs/sdk.md', () => {
  let s: Awaited<ReturnType<typeof startPublicServer>>;
  beforeAll(async () => {
    s = await startPublicServer('sqlite');
  });
  afterAll(async () => {
    await s.close();
  });

  it('the quick start runs against a live server: progress, file links, cost, balance', async () => {
    const file = path.join(ROOT, 'test/client/typecheck/.quickstart.ts');
    writeFileSync(file, blocks('../../../packages/client/src/index.js')[0]!);
    try {
      const key = (await s.account(5)).key;
      const r = await run(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, GENGATE_KEY: key, GENGATE_URL: s.publicUrl } });
      expect(r.stdout).toMatch(new RegExp(`^image ${s.publicUrl}/files/[A-Za-z0-9_-]{22}/image\\.png$`, 'm'));
      expect(r.stdout).toMatch(/^cost 0\.\d{3} USD \(\d+ micro-USD\)$/m);
      expect(r.stdout).toMatch(/^balance 4\.\d{4}$/m);
    } finally {
      rmSync(file, { force: true });
    }
  }, 240_000);

  it('every TypeScript block compiles', async () => {
    const files = blocks('../../../packages/client/src/index.js').map((code, i) => {
      const file = path.join(ROOT, `test/client/typecheck/.block-${i}.ts`);
      writeFileSync(file, `${code}\nexport {};\n`);
      return file;
    });
    try {
      const r = await tsc(...files);
      expect(r.out).toBe('');
    } finally {
      for (const f of files) rmSync(f, { force: true });
    }
  }, 240_000);
});
