import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'fuzz-admin-token-0123456789';
/** How long each database's run may take: the whole file stays within a minute in CI. */
const BUDGET_MS = { sqlite: 25_000, postgres: 15_000 } as const;

/** Values that broke parsers before (issue 17) or commonly do. */
const nasty = ['%', '%zz', '%E0%A4%A', '..', '%2e%2e%2f', '\u0000', '\ud800', 'a'.repeat(3000), '[]', '{}', '__proto__', 'constructor', '-1', '1e309', ' '];
const nastyText = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom(...nasty));
/** A JSON text nested `depth` arrays deep. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** An input object shaped like a model's, with hostile values where fields go. */
const inputLike = fc.dictionary(
  fc.constantFrom(
    'prompt',
    'image_urls',
    'image_url',
    'duration',
    'aspect_ratio',
    'resolution',
    'seed',
    'first_frame_url',
    'video_urls',
    'audio_urls',
    'output_format',
    'n',
  ),
  fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom('http://127.0.0.1/files/%zz/x.png', 'http://localhost:1/files/f_%/a', 'http://[::1]/x', ...nasty)),
);

const bodyText = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc
    .record({
      model: fc.oneof(fc.constantFrom('nano-banana', 'seedream-flash', 'veo-3.1', 'suno-v6', 'kling-2.6'), nastyText),
      input: inputLike,
      callBackUrl: fc.option(nastyText),
    })
    .map((v) => JSON.stringify(v)),
  fc.integer({ min: 100, max: 20_000 }).map(nested),
  fc.string({ maxLength: 200 }),
  fc.constant(undefined),
);

const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=latin1',
  'text/plain',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  'application/x-www-form-urlencoded',
  'garbage',
  '',
);

/** Every route the app registered, with its :params filled from `params`. */
function fill(route: string, params: string[]): string {
  let i = 0;
  return route.replace(/:[A-Za-z]+/g, () => encodeURIComponentLoose(params[i++ % params.length] ?? 'x'));
}

/** Encodes most of a value but lets a few raw '%' through, as a sloppy or hostile client would. */
function encodeURIComponentLoose(v: string): string {
  return v.startsWith('%') ? v : encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'));
}

for (const dialect of dialects()) {
  describe(`fuzzing every endpoint on ${dialect}`, () => {
    let s: TestServer;
    let key: string;
    let routes: string[];
    beforeAll(async () => {
      s = await startServer(dialect, { ADMIN_TOKEN: ADMIN, MODERATION_IMAGES: 'off', ALLOW_PRIVATE_NETWORK: 'false' });
      key = (await s.account(5)).key;
      routes = (s.app as unknown as { registeredRoutes: string[] }).registeredRoutes.filter((r) => !r.startsWith('HEAD '));
    });
    afterAll(async () => {
      await s?.close();
    });

    it('answers every request below 500, errors always in the envelope, never cached', async () => {
      const failures: string[] = [];
      const request = fc.record({
        route: fc.constantFrom(...routes),
        params: fc.array(nastyText, { minLength: 1, maxLength: 3 }),
        query: fc.array(fc.tuple(fc.constantFrom('taskId', 'limit', 'state', 'before', 'model', 'format', 'input', 'x', '%'), nastyText), { maxLength: 4 }),
        auth: fc.constantFrom('none', 'key', 'admin', 'garbage'),
        contentType,
        body: bodyText,
        idempotencyKey: fc.option(nastyText),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const [method, route] = r.route.split(' ') as [string, string];
          const query = r.query.map(([k, v]) => `${k}=${encodeURIComponentLoose(v)}`).join('&');
          const headers: Record<string, string> = {};
          if (r.auth === 'key') headers.authorization = `Bearer ${key}`;
          if (r.auth === 'admin') headers.authorization = `Bearer ${ADMIN}`;
          if (r.auth === 'garbage') headers.authorization = 'Bearer \u00ff%zz';
          if (r.contentType !== undefined) headers['content-type'] = r.contentType;
          if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey.replace(/[^\x20-\x7e]/g, '?');
          const path = fill(route, r.params) + (query ? `?${query}` : '');
          const withBody = method !== 'GET' && method !== 'HEAD';
          let res: Response;
          try {
            res = await fetch(s.url + path, { method, headers, body: withBody ? r.body : undefined });
          } catch (e) {
            // fetch itself refuses some header values before sending: nothing reached the server.
            if (e instanceof TypeError) return;
            throw e;
          }
          const text = await res.text();
          const what = `${method} ${path} (${r.contentType}, ${r.auth}): ${res.status} ${text.slice(0, 300)}`;
          if (res.status >= 500 && !(route === '/readyz' && res.status === 503)) failures.push(`${what} body ${String(r.body).slice(0, 200)}`);
          // MCP answers JSON-RPC errors; OAuth's endpoints answer OAuth's {error, error_description} and the consent page HTML (decision 2202).
          if (res.status >= 400 && !route.startsWith('/mcp')) {
            let body: { code?: unknown; msg?: unknown; ok?: unknown; error?: { code?: unknown; message?: unknown } } | null = null;
            try {
              body = JSON.parse(text);
            } catch {
              /* not JSON */
            }
            // The public price list and calculator answer errors in their own documented shape (SPEC: no envelope).
            const pricing = route.startsWith('/v1/pricing');
            const oauthError = body as { error?: unknown; error_description?: unknown } | null;
            const shaped = pricing
              ? body?.ok === false && typeof body.error?.message === 'string'
              : route === '/oauth/authorize'
                ? (res.headers.get('content-type') ?? '').startsWith('text/html')
                : route.startsWith('/oauth/')
                  ? typeof oauthError?.error === 'string' && typeof oauthError.error_description === 'string'
                  : typeof body?.msg === 'string' && typeof body?.code === 'number';
            if (!shaped) failures.push(`not the envelope: ${what}`);
            if (/public|max-age=[1-9]/.test(res.headers.get('cache-control') ?? '')) failures.push(`cacheable error: ${what}`);
            if (/\/work\/|\/tmp\/|node_modules|at [A-Za-z.]+ \(/.test(text)) failures.push(`shows a server path: ${what}`);
          }
          return true;
        }),
        { interruptAfterTimeLimit: BUDGET_MS[dialect], numRuns: 1_000_000, seed: Number(process.env.FUZZ_SEED ?? 17) },
      );
      // One example per route and kind of failure.
      const kinds = new Map(
        failures.map((f) => [
          f.replace(/ \/[^ ]*/, (p) => ` ${p.split('?')[0]!.split('/').slice(0, 4).join('/')}`).split(': ')[0]! + f.split(': ')[1]?.slice(0, 3),
          f.slice(0, 400),
        ]),
      );
      expect([...kinds.values()]).toEqual([]);
    }, 60_000);
  });
}
