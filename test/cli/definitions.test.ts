import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gengate } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** `gengate models list|show|apply|retire|restore` (decision 3307) against a running server's database: another process's changes. */

const YAML = `id: acme/cli-image
title: Acme CLI Image
kind: image
description: Text to image.
inputs:
  prompt: { type: text, max: 4000, required: true, description: What the image shows. }
price:
  unit: image
  rate: "0.021"
routes:
  - { backend: local }
`;

describe.each(dialects())('gengate models (stored definitions) on %s', (dialect) => {
  let s: TestServer;
  let dir: string;
  beforeAll(async () => {
    s = await startServer(dialect, { MODEL_SWITCH_CACHE_MS: '60000' });
    dir = mkdtempSync(path.join(tmpdir(), 'gengate-defs-'));
  });
  afterAll(() => s.close());
  const env = () => ({ DATABASE_URL: s.config.DATABASE_URL, DATA_DIR: s.config.DATA_DIR });
  const createTask = (key: string) => s.call('POST', '/api/v1/jobs/createTask', { key, body: { model: 'acme/cli-image', input: { prompt: 'x' } } });

  it('apply stores a version another process loads; retire refuses new tasks; show lists who did what; a broken file applies nothing', async () => {
    const good = path.join(dir, 'acme.yaml');
    writeFileSync(good, YAML);
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, YAML.replace('rate: "0.021"', 'rate: "SET-PRICE"').replace('acme/cli-image', 'acme/cli-bad'));
    const [applied, refused] = await Promise.all([
      gengate(['models', 'apply', good, '--who', 'bob', '--note', 'launch', '--json'], env()),
      gengate(['models', 'apply', bad], env()),
    ]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout).definitions[0]).toMatchObject({ id: 'acme/cli-image', version: 1, source: 'database' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/bad\.yaml:\d+: price\.rate: .*\nnothing applied: 1 problem/);

    // The server is another process: it loads the change at its next poll (called here, not waited for).
    await s.services.definitions.refresh();
    const a = await s.account(1);
    const ok = await createTask(a.key);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(s.services.catalog.find('acme/cli-bad')).toBeUndefined();

    const retired = await gengate(['models', 'retire', 'acme/cli-image', '--who', 'carol', '--json'], env());
    expect(retired.code, retired.stderr).toBe(0);
    await s.services.definitions.refresh();
    expect((await createTask(a.key)).body.msg).toMatch(/acme\/cli-image was retired/);

    const [shown, listed] = await Promise.all([gengate(['models', 'show', 'acme/cli-image'], env()), gengate(['models', 'list', '--json'], env())]);
    expect(shown.stdout).toMatch(/v2 .* retire +cli:carol\n +v1 .* create +cli:bob +"launch"/);
    expect(JSON.parse(listed.stdout).definitions).toContainEqual(expect.objectContaining({ id: 'acme/cli-image', retired: true, version: 2 }));
    expect(JSON.parse(listed.stdout).definitions).toContainEqual(expect.objectContaining({ id: 'seedream-flash', source: 'file', version: 0 }));

    const restored = await gengate(['models', 'restore', 'acme/cli-image'], env());
    expect(restored.code, restored.stderr).toBe(0);
    await s.services.definitions.refresh();
    expect((await createTask(a.key)).status).toBe(200);
  }, 180_000); // several runs of the real CLI, each a new process loading the sources: slow on a busy machine
});
