import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_ASSETS_PATH, CONSOLE_PAGES } from '../../api/index.js';
import type { Config } from '../../config.js';
import { Errors } from '../../errors.js';
import type { Services } from '../../services.js';

/** Where `npm run build` puts the console (vite, console/vite.config.ts): dist/console of the package, from src/ and from dist/ alike. */
export const BUILT_CONSOLE = fileURLToPath(new URL('../../../dist/console', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * The page's rules: scripts and styles only from this server (nothing from a CDN), results may be
 * shown from wherever the result files live (S3, presigned links), calls only to this server.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  'img-src * data: blob:',
  'media-src * blob:',
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>GenGate</title></head><body><main>
<h1>The console is not built</h1><p>Run <code>npm run build</code> (it runs on <code>npm install</code>) and restart GenGate. The API works as it is: see <a href="/docs">/docs</a>.</p>
</main></body></html>`;

interface Built {
  page: string;
  assets: Map<string, { type: string; bytes: Buffer }>;
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The built console, read once: index.html with the server's settings in its meta tag, and the assets. Null when not built. */
function load(dir: string, config: Config, payments: Services['payments']): Built | null {
  const index = path.join(dir, 'index.html');
  if (!existsSync(index)) return null;
  // The top-up page's facts: whether card payments are on and the amounts (micro-USD), as POST /api/v1/topups checks them.
  const { presets, min, max } = payments.topups.amounts;
  const topups = { enabled: payments.enabled, presets, min, max };
  const settings = JSON.stringify({ signup: config.SIGNUP, mail: Boolean(config.SMTP_URL), topUpUrl: config.TOPUP_URL, topups });
  const page = readFileSync(index, 'utf8').replace(
    '<meta name="gengate-settings" content="{}" />',
    `<meta name="gengate-settings" content="${escapeAttr(settings)}" />`,
  );
  const assets = new Map<string, { type: string; bytes: Buffer }>();
  const assetDir = path.join(dir, 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { type, bytes: readFileSync(path.join(assetDir, name)) });
  }
  return { page, assets };
}

/**
 * The web console (DECISIONS §20, decision 2000): the same HTML page at each console path, with
 * cache-control no-store (a new build is picked up at once), and its content-hashed assets under
 * /console/assets/ with cache-control immutable. The API's paths are all elsewhere (/api, /v1,
 * /admin, /docs...), so nothing here shadows them. Like /docs, the pages are not rate limited: they are
 * answered from memory (the API calls the app makes are limited as usual).
 */
export function registerConsoleRoutes(app: FastifyInstance, services: Services) {
  const { config, payments } = services;
  const dir = config.CONSOLE_DIR ?? BUILT_CONSOLE;
  let built: Built | null | undefined;
  const get = () => (built === undefined || built === null ? (built = load(dir, config, payments)) : built);
  for (const url of CONSOLE_PAGES) {
    app.get(url, async (_req, reply) => {
      const b = get();
      reply
        .header('cache-control', 'no-store')
        .header('content-security-policy', CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
        .header('x-frame-options', 'DENY');
      return reply
        .code(b ? 200 : 503)
        .type('text/html; charset=utf-8')
        .send(b?.page ?? NOT_BUILT);
    });
  }
  app.get(CONSOLE_ASSETS_PATH, async (req, reply) => {
    const name = (req.params as { file: string }).file;
    const file = get()?.assets.get(name);
    if (!file) throw Errors.notFound(`no console file ${name}: the console's files have content-hashed names; reload the page`);
    return reply.header('cache-control', 'public, max-age=31536000, immutable').header('x-content-type-options', 'nosniff').type(file.type).send(file.bytes);
  });
}
