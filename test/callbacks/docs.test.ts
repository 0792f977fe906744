import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, eventually } from '../tasks/support.js';
import { startReceiver } from './receiver.js';

/** The `receiver.mjs` block of docs/callbacks.md, written where it can import the project's packages. */
async function docsReceiver() {
  const text = readFileSync(path.resolve('docs/callbacks.md'), 'utf8');
  const code = /```js receiver\.mjs\n([\s\S]*?)```/.exec(text)?.[1];
  expect(code, 'docs/callbacks.md has a receiver.mjs block').toBeTruthy();
  const dir = path.resolve('node_modules/.gengate-docs');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `receiver-${process.pid}.mjs`);
  writeFileSync(file, code!);
  return import(file) as Promise<{ verifyStandard: (...args: unknown[]) => unknown; verifyLegacy: (...args: unknown[]) => unknown }>;
}

describe('docs/callbacks.md receiver code', () => {
  let s: TestServer;
  let r: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    r = await startReceiver(() => 200);
    s = await startServer('sqlite', { ...FAST, ALLOW_PRIVATE_NETWORK: 'true' });
    s.services.engine.start();
    s.services.callbacks.start();
  });
  afterAll(async () => {
    await s.close();
    await r.close();
  });

  it('verifies a real delivery with both schemes and refuses a tampered one', async () => {
    const { verifyStandard, verifyLegacy } = await docsReceiver();
    const a = await s.account(1);
    const secret = await s.services.accounts.webhookSecret(a.id);
    const id = await create(s, a.key, 'nano-banana-2', { prompt: 'a cat' }, { callBackUrl: `${r.url}/hook` });
    await eventually(() => r.received.length > 0, 15_000, 'a delivery');
    const [got] = r.received;
    expect(verifyStandard(secret, got!.headers, got!.body)).toMatchObject({ taskId: id, code: 200 });
    expect(verifyLegacy(secret, got!.headers, got!.body)).toMatchObject({ taskId: id });
    const tampered = got!.body.replace('"success"', '"fail"');
    expect(() => verifyStandard(secret, got!.headers, tampered)).toThrow();
    expect(() => verifyLegacy('whsec_d3Jvbmc=', got!.headers, got!.body)).toThrow('bad signature');
  });
});
