import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkModels, importModels, type ImportFlags } from '../../src/cli/models.js';
import { startSchemaFake, kiePage } from '../fakes/schemas.js';
import {
  FAL_IMAGE,
  FAL_VIDEO,
  KIE_MODEL,
  REPLICATE_MODEL,
  REPLICATE_VERSION,
  falDoc,
  falImage,
  falVideo,
  falVideoInput,
  kieMarkdown,
  replicateModel,
} from './import-docs.js';

/**
 * `gengate models import` (decision 3303) against local fakes serving each upstream's published
 * documents in their real shapes (test/fakes/schemas.ts says whose): the mapping of JSON Schema to
 * inputs, the route, the upstream's cost beside the placeholder price, and the failures that write
 * nothing.
 */

const ENV = { FAL_KEY: 'fal-k', REPLICATE_API_TOKEN: 'r8_k', GENGATE_CONFIG: '' };
let fake: Awaited<ReturnType<typeof startSchemaFake>>;
const dir = mkdtempSync(path.join(tmpdir(), 'gg-import-'));
const broken = { ...falDoc('fal-ai/no-paths', 'text-to-video', 'Acme', falVideoInput), paths: {} };
const needsLoras = falDoc('fal-ai/acme/loras', 'text-to-video', 'Acme', { ...falVideoInput, required: ['prompt', 'loras'] });

beforeAll(async () => {
  fake = await startSchemaFake({
    fal: {
      [FAL_VIDEO]: falVideo,
      [FAL_IMAGE]: falImage,
      'fal-ai/html': '<html><body>Bad gateway</body></html>',
      'fal-ai/no-paths': broken,
      'fal-ai/acme/loras': needsLoras,
    },
    falPrices: { [FAL_VIDEO]: { unit_price: 0.07, unit: 'seconds' }, [FAL_IMAGE]: { unit_price: 0.03, unit: 'images' } },
    falKey: 'fal-k',
    replicate: { [REPLICATE_MODEL]: replicateModel, 'acme/unpublished': { ...replicateModel, latest_version: null } },
    replicateToken: 'r8_k',
    kie: {
      [KIE_MODEL]: kieMarkdown,
      'acme/other': kiePage('Other', 'Another model', 'acme/someone-else', 'properties:\n  prompt:\n    type: string'),
      'acme/no-schema': '# Acme\n\n> A page without its OpenAPI document.\n',
    },
  });
});
afterAll(() => fake.close());

async function run(source: string, flags: ImportFlags = {}, env: NodeJS.ProcessEnv = ENV) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await importModels(
    source,
    { baseUrl: fake.url, pricingUrl: fake.url, ...flags },
    (t) => out.push(t),
    (t) => err.push(t),
    env,
  );
  return { code, text: out.join('\n'), err: err.join('\n') };
}

function check(file: string) {
  const err: string[] = [];
  const code = checkModels(
    file,
    () => {},
    (t) => err.push(t),
  );
  return { code, err: err.join('\n') };
}

type Def = { inputs: Record<string, Record<string, unknown>>; price: Record<string, unknown>; routes: Record<string, unknown>[] } & Record<string, unknown>;

describe('fal: the endpoint queue OpenAPI document and the pricing API', () => {
  it('maps every importable input in fal order with types, ranges, defaults and required, and leaves out what it cannot take', async () => {
    const r = await run(`fal:${FAL_VIDEO}`);
    expect(r.code, r.err).toBe(0);
    const def = parse(r.text) as Def;
    expect(def).toMatchObject({ id: FAL_VIDEO, kind: 'video' });
    expect(Object.keys(def.inputs)).toEqual(['prompt', 'image_url', 'duration', 'aspect_ratio', 'resolution', 'negative_prompt', 'guidance_scale', 'seed']);
    expect(def.inputs.prompt).toEqual({ type: 'text', max: 2000, required: true, description: 'The text prompt describing the video.', label: 'Prompt' });
    expect(def.inputs.image_url).toMatchObject({ type: 'media', accepts: 'image', description: 'An image to start from.' });
    expect(def.inputs.duration).toMatchObject({ type: 'choice', values: ['5', '10'], default: '5' });
    expect(def.inputs.aspect_ratio).toMatchObject({ type: 'choice', values: ['16:9', '9:16', '1:1'], default: '16:9', description: 'Aspect Ratio' });
    expect(def.inputs.guidance_scale).toMatchObject({ type: 'number', min: 0, max: 10, default: 3.5 });
    expect(def.inputs.seed).toMatchObject({ type: 'integer', min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
    expect(def.inputs.negative_prompt).toEqual({ type: 'text', max: 10000, description: 'What to avoid.', label: 'Negative Prompt' });
    // The notes the operator must read sit beside what they are about.
    expect(r.text).toContain('# TODO: accepts image: guessed from the name "image_url"; confirm');
    expect(r.text).toContain('# TODO: the upstream states no range: set min and max');
    expect(r.text).toContain('# - loras: not imported, a list of objects, which a definition cannot take');
    expect(r.text).toContain('# - sync_mode: not imported, when on, fal returns the file inside its answer');
    expect(r.text).toContain("# kind: fal's category text-to-video.");
    expect(def.routes).toEqual([{ backend: 'fal', model: FAL_VIDEO, key_env: 'FAL_KEY', as_is: true }]);
  });

  it("writes fal's listed cost beside each placeholder: a table over the duration choice, billed per second upstream", async () => {
    const r = await run(`fal:${FAL_VIDEO}`);
    const def = parse(r.text) as Def;
    expect(def.price).toEqual({ unit: 'run', by: 'duration', rates: { '5': 'SET-PRICE', '10': 'SET-PRICE' } });
    expect(r.text).toMatch(
      /# Upstream cost: fal lists \$0\.07 USD per seconds \(http:\/\/127\.0\.0\.1:\d+\/v1\/models\/pricing\?endpoint_id=fal-ai%2Facme%2Fvideo%2Ftext-to-video, read \d{4}-\d\d-\d\d\)\./,
    );
    expect(r.text).toContain("'5': SET-PRICE # upstream cost $0.35 (5 s × $0.07)");
    expect(r.text).toContain("'10': SET-PRICE # upstream cost $0.7 (10 s × $0.07)");
    const priced = fake.calls.find((c) => c.path === '/v1/models/pricing');
    expect(priced?.headers.authorization).toBe('Key fal-k');
  });

  it('pins the output count fields to one by the route, drops an object default, and prices per image', async () => {
    const r = await run(`fal:${FAL_IMAGE}`);
    expect(r.code, r.err).toBe(0);
    const def = parse(r.text) as Def;
    expect(Object.keys(def.inputs)).toEqual(['prompt', 'image_size', 'seed', 'enable_safety_checker']);
    expect(def.inputs.image_size).toEqual({
      type: 'choice',
      values: ['square_hd', 'square', 'portrait_4_3', 'landscape_16_9', 'auto_2K'],
      description: 'The size of the generated image.',
      label: 'Image Size',
    });
    expect(r.text).toContain('# TODO: the upstream also takes ImageSize, which this draft does not offer');
    expect(r.text).toContain('# TODO: the upstream\'s default {"height":2048,"width":2048} is not a value of this input: left to the upstream');
    expect(def.routes[0]).toMatchObject({ map: { set: { num_images: 1, max_images: 1 } } });
    expect(def.price).toEqual({ unit: 'image', rate: 'SET-PRICE' });
  });

  it('without the key, the draft says where fal publishes the price; a refused key is a warning, not a failure', async () => {
    const none = await run(`fal:${FAL_IMAGE}`, {}, { GENGATE_CONFIG: '' });
    expect(none.code).toBe(0);
    expect(none.text).toContain('fal publishes prices to an API key: set FAL_KEY to have them read, or see https://fal.ai/models/fal-ai/acme/image');
    const refused = await run(`fal:${FAL_IMAGE}`, {}, { FAL_KEY: 'wrong', GENGATE_CONFIG: '' });
    expect(refused.code).toBe(0);
    expect(refused.err).toContain("warning: the listed price was not read: fal's price of fal-ai/acme/image: HTTP 401");
    expect(refused.err).toContain('fal refused the key in FAL_KEY');
  }, 240_000);
});

describe("Replicate: the model's latest version openapi_schema", () => {
  it('orders by x-order, reads enums through allOf references, pins the version on the route, and says where the price is', async () => {
    const r = await run(`replicate:${REPLICATE_MODEL}`);
    expect(r.code, r.err).toBe(0);
    const def = parse(r.text) as Def;
    expect(def).toMatchObject({ id: REPLICATE_MODEL, title: 'Flux Like', kind: 'image', description: replicateModel.description });
    expect(Object.keys(def.inputs)).toEqual(['prompt', 'aspect_ratio', 'output_format', 'seed', 'go_fast', 'image', 'output_quality']);
    expect(def.inputs.aspect_ratio).toEqual({
      type: 'choice',
      values: ['1:1', '16:9', '9:16'],
      default: '1:1',
      description: 'Aspect ratio for the generated image',
    });
    expect(def.inputs.image).toMatchObject({ type: 'media', accepts: 'image' });
    expect(def.inputs.output_quality).toMatchObject({ type: 'integer', min: 0, max: 100, default: 80 });
    expect(def.routes).toEqual([
      { backend: 'replicate', model: `${REPLICATE_MODEL}:${REPLICATE_VERSION}`, key_env: 'REPLICATE_API_TOKEN', as_is: true, map: { set: { num_outputs: 1 } } },
    ]);
    expect(r.text).toContain("Upstream cost: Replicate's API publishes no price: see https://replicate.com/acme/flux-like");
    expect(fake.calls.find((c) => c.path === `/v1/models/${REPLICATE_MODEL}`)?.headers.authorization).toBe('Bearer r8_k');
  });

  it('needs the token, and names the setting', async () => {
    const r = await run(`replicate:${REPLICATE_MODEL}`, {}, { GENGATE_CONFIG: '' });
    expect(r).toMatchObject({ code: 1, text: '' });
    expect(r.err).toBe(
      `gengate models import: replicate:${REPLICATE_MODEL}: Replicate's model ${REPLICATE_MODEL}: Replicate's API needs a token: set REPLICATE_API_TOKEN (or name another setting with --key-env)`,
    );
  }, 240_000);
});

describe("kie.ai: the OpenAPI document of the model's documentation page", () => {
  it('reads the page title and summary, the input of createTask, photo lists with their count and size, and routes to kie as is', async () => {
    const r = await run(`kie:${KIE_MODEL}`);
    expect(r.code, r.err).toBe(0);
    const def = parse(r.text) as Def;
    expect(def).toMatchObject({
      id: KIE_MODEL,
      title: 'Acme - Kie Image',
      kind: 'image',
      description: "Image generation and editing using Acme's Kie Image model",
    });
    expect(Object.keys(def.inputs)).toEqual(['prompt', 'image_urls', 'output_format', 'image_size']);
    expect(def.inputs.image_urls).toMatchObject({ type: 'media', accepts: 'image', count: { max: 10 }, upload_mb: 10 });
    expect(def.inputs.output_format).toMatchObject({ type: 'choice', values: ['png', 'jpeg'], default: 'png' });
    expect(def.routes).toEqual([{ backend: 'kie', model: KIE_MODEL, key_env: 'KIE_API_KEY', as_is: true }]);
    expect(r.text).toContain('kie.ai lists its prices in credits on https://kie.ai/pricing');
  });
});

describe('an unreachable or malformed upstream schema fails with a clear message and writes nothing', () => {
  let closedPort = '';
  beforeAll(async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closedPort = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const cases: [string, () => [string, ImportFlags], RegExp][] = [
    [
      'unreachable',
      () => [`fal:${FAL_VIDEO}`, { baseUrl: closedPort }],
      /^gengate models import: fal:fal-ai\/acme\/video\/text-to-video: cannot reach fal's OpenAPI document of .* at http:\/\/127\.0\.0\.1:\d+\/api\/openapi\/queue\/openapi\.json\?endpoint_id=.*: ECONNREFUSED$/,
    ],
    [
      'an unknown endpoint',
      () => ['fal:fal-ai/nothing', {}],
      /fal:fal-ai\/nothing: fal's OpenAPI document of fal-ai\/nothing: HTTP 404 from .*: fal has no endpoint fal-ai\/nothing/,
    ],
    ['not JSON', () => ['fal:fal-ai/html', {}], /fal's OpenAPI document of fal-ai\/html at .* is not JSON \(it starts "<html><body>Bad gateway/],
    ['no request body', () => ['fal:fal-ai/no-paths', {}], /has no request body schema for POST \/fal-ai\/no-paths/],
    [
      'a required input a definition cannot take',
      () => ['fal:fal-ai/acme/loras', {}],
      /fal:fal-ai\/acme\/loras: the upstream requires loras, a list of objects, which a definition cannot take/,
    ],
    ['no published version', () => ['replicate:acme/unpublished', {}], /Replicate's model acme\/unpublished at .* has no published version/],
    ['an unknown Replicate model', () => ['replicate:acme/nothing', {}], /HTTP 404 from .*: Replicate has no model acme\/nothing/],
    [
      'a kie.ai page without its OpenAPI document',
      () => ['kie:acme/no-schema', {}],
      /kie.ai's page at .*\/market\/acme\/no-schema\.md holds no OpenAPI document/,
    ],
    ['a kie.ai page of another model', () => ['kie:acme/other', {}], /documents acme\/someone-else, not acme\/other/],
    [
      'no kie.ai page',
      () => ['kie:acme/missing', {}],
      /HTTP 404 from .*: kie.ai has no page at this address: find acme\/missing's page in https:\/\/docs.kie.ai\/llms.txt and pass its address with --doc/,
    ],
    ['an unknown upstream', () => ['civitai:foo', {}], /"civitai:foo": name the upstream and its model, e.g. fal:fal-ai\/flux\/dev, replicate:/],
    [
      'an alias of a shipped model as the id',
      () => [`kie:${KIE_MODEL}`, { id: 'vendor/nano-banana' }],
      /the id "vendor\/nano-banana" is already a name of the shipped model google\/nano-banana: choose another with --id/,
    ],
  ];
  it.each(cases)('%s', async (_what, args, message) => {
    const [source, flags] = args();
    const out = path.join(dir, `draft-${readdirSync(dir).length}.yaml`);
    const r = await run(source, { ...flags, out });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(message);
    expect(r.text).toBe('');
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('the draft file', () => {
  it('is refused by models check until the price is set, naming the line; then it passes; an existing file is kept without --force', async () => {
    const out = path.join(dir, 'video.yaml');
    const r = await run(`fal:${FAL_VIDEO}`, { out });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(`drafted ${FAL_VIDEO} in ${out}: set its price (SET-PRICE), read its notes, then run gengate models check ${out}`);
    const text = readFileSync(out, 'utf8');
    const line = text.split('\n').findIndex((l) => l.includes("'5': SET-PRICE")) + 1;
    expect(check(out).err).toContain(`${out}:${line}: price.rates.5: is SET-PRICE: set your price, a USD amount such as "0.125"`);
    writeFileSync(out, text.replace(/SET-PRICE/g, '"0.60"'));
    expect(check(out)).toEqual({ code: 0, err: '' });
    const again = await run(`fal:${FAL_VIDEO}`, { out });
    expect(again).toMatchObject({ code: 1, err: `gengate models import: ${out} exists: choose another --out, or pass --force to replace it` });
    expect(readFileSync(out, 'utf8')).not.toContain('SET-PRICE');
    expect((await run(`fal:${FAL_VIDEO}`, { out, force: true })).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('SET-PRICE');
  });

  it("goes into a folder as <id>.yaml, and --id and --kind are the operator's", async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'gg-import-dir-'));
    const r = await run(`replicate:${REPLICATE_MODEL}`, { out: folder, id: 'my/flux', kind: 'image' });
    expect(r.code, r.err).toBe(0);
    const def = parse(readFileSync(path.join(folder, 'my-flux.yaml'), 'utf8')) as Def;
    expect(def).toMatchObject({ id: 'my/flux', kind: 'image' });
    expect(readFileSync(path.join(folder, 'my-flux.yaml'), 'utf8')).toContain('# kind: given with --kind.');
  });
});
