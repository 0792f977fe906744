import { startFake, type Answer } from './base.js';

/**
 * Where `gengate models import` reads upstream schemas and prices, each in the shape the real
 * service publishes (tests point `--base-url` / `--pricing-url` here):
 *
 * - fal (fal.ts `FalSchemas`): `GET /api/openapi/queue/openapi.json?endpoint_id=` answers the
 *   endpoint's queue OpenAPI 3.0 document, public, as fal.ai serves it (info.x-fal-metadata
 *   {endpointId, category}, components.schemas.<Name>Input with `x-fal-order-properties`, pydantic's
 *   `anyOf [X, {type: null}]` for optional fields, paths."/<endpoint>".post.requestBody → the input).
 *   `GET /v1/models/pricing?endpoint_id=` with `Authorization: Key …` answers fal's platform API
 *   pricing `{prices: [{endpoint_id, unit_price, unit, currency}], next_cursor, has_more}`
 *   (docs.fal.ai/platform-apis/v1/models/pricing). fal does not document its answer for an unknown
 *   endpoint; a 404 with `{detail}` is assumed.
 * - Replicate: `GET /v1/models/{owner}/{name}` with `Authorization: Bearer …` answers the model
 *   object of Replicate's HTTP API (models.get: owner, name, description, latest_version {id,
 *   openapi_schema}); Cog's schema puts the input at components.schemas.Input with `x-order` on
 *   each field and enums as `allOf: [{$ref}]` to a schema of their own. Errors are problem details.
 * - kie.ai: `GET /market/<page>.md` answers the markdown of a market model's documentation page,
 *   as docs.kie.ai serves it (title, a `>` summary, and the page's OpenAPI 3.0 document in a
 *   ````yaml block under "## OpenAPI": POST /api/v1/jobs/createTask with `model` and `input`).
 */

type Json = Record<string, unknown>;

export interface SchemaFakeOptions {
  /** fal: endpoint id → its queue OpenAPI document (or raw text, to serve something malformed). */
  readonly fal?: Readonly<Record<string, Json | string>>;
  /** fal: endpoint id → its price row (unit_price, unit); answered only to `falKey`. */
  readonly falPrices?: Readonly<Record<string, { unit_price: number; unit: string }>>;
  readonly falKey?: string;
  /** Replicate: owner/name → the model object; answered only to `replicateToken`. */
  readonly replicate?: Readonly<Record<string, Json>>;
  readonly replicateToken?: string;
  /** kie.ai: page path under /market/ (without .md) → the page's markdown. */
  readonly kie?: Readonly<Record<string, string>>;
}

export async function startSchemaFake(options: SchemaFakeOptions) {
  const json = (status: number, body: unknown): Answer => ({ status, json: body });
  return startFake((call) => {
    if (call.method !== 'GET') return json(405, { detail: 'Method Not Allowed' });
    if (call.path === '/api/openapi/queue/openapi.json') {
      const doc = options.fal?.[call.query.get('endpoint_id') ?? ''];
      if (doc === undefined) return json(404, { detail: 'Not Found' });
      return typeof doc === 'string' ? { status: 200, text: doc, headers: { 'content-type': 'text/html' } } : json(200, doc);
    }
    if (call.path === '/v1/models/pricing') {
      if (call.headers.authorization !== `Key ${options.falKey}`) return json(401, { error: { type: 'authorization_error', message: 'Invalid API key' } });
      const ids = call.query.getAll('endpoint_id').flatMap((v) => v.split(','));
      const prices = ids.filter((id) => options.falPrices?.[id]).map((id) => ({ endpoint_id: id, ...options.falPrices![id], currency: 'USD' }));
      return json(200, { prices, next_cursor: null, has_more: false });
    }
    const model = /^\/v1\/models\/([^/]+)\/([^/]+)$/.exec(call.path);
    if (model) {
      const problem = (status: number, title: string, detail: string) => ({
        status,
        json: { title, detail, status },
        headers: { 'content-type': 'application/problem+json' },
      });
      if (call.headers.authorization !== `Bearer ${options.replicateToken}`)
        return problem(401, 'Unauthenticated', 'You did not pass a valid authentication token');
      const found = options.replicate?.[`${model[1]}/${model[2]}`];
      return found ? json(200, found) : problem(404, 'Not found', 'The requested resource could not be found.');
    }
    const page = /^\/market\/(.+)\.md$/.exec(call.path);
    if (page && options.kie?.[page[1]!] !== undefined)
      return { status: 200, text: options.kie[page[1]!], headers: { 'content-type': 'text/markdown; charset=utf-8' } };
    return { status: 404, text: 'Page not found', headers: { 'content-type': 'text/plain' } };
  });
}

/** A kie.ai market page as docs.kie.ai serves it in markdown: the model's OpenAPI document in a ````yaml block. */
export function kiePage(title: string, summary: string, model: string, inputYaml: string): string {
  const indent = (text: string, n: number) =>
    text
      .split('\n')
      .map((l) => (l ? ' '.repeat(n) + l : l))
      .join('\n');
  return `> ## Documentation Index
> Fetch the complete documentation index at: https://docs.kie.ai/llms.txt

# ${title}

> ${summary}

## Query Task Status

After submitting a task, use the unified query endpoint to check progress and retrieve results.

## OpenAPI

\`\`\`\`yaml market/${model}.json post /api/v1/jobs/createTask
openapi: 3.0.0
info:
  title: ${title} API
  version: 1.0.0
servers:
  - url: https://api.kie.ai
paths:
  /api/v1/jobs/createTask:
    post:
      summary: Generate content using ${model}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required:
                - model
              properties:
                model:
                  type: string
                  enum:
                    - ${model}
                  default: ${model}
                callBackUrl:
                  type: string
                  format: uri
                input:
                  type: object
                  description: Input parameters for the generation task
${indent(inputYaml, 18)}
      responses:
        '200':
          description: Request successful
\`\`\`\`
`;
}
