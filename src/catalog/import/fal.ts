import { expectOk, get, ImportError, isObject, jsonObject, readDoc } from './fetch.js';
import { kindOfCategory, kindOfWords, titleOf } from './guess.js';
import { mapInputs, resolver } from './schema.js';
import { baseOf, type Cost, type ReadOptions, type Upstream } from './upstream.js';

/**
 * fal: each endpoint's queue OpenAPI document, public at
 * `https://fal.ai/api/openapi/queue/openapi.json?endpoint_id=<endpoint>` (info.x-fal-metadata with
 * the endpoint id and its category; `paths["/<endpoint>"].post.requestBody` → the input schema in
 * components.schemas, fields ordered by `x-fal-order-properties`), and the listed price from fal's
 * platform API `GET https://api.fal.ai/v1/models/pricing?endpoint_id=<endpoint>` with
 * `Authorization: Key <FAL_KEY>` → `{prices: [{endpoint_id, unit_price, unit, currency}]}`.
 */

export const FAL_DOCS_URL = 'https://fal.ai';
export const FAL_API_URL = 'https://api.fal.ai';

/** fal's own fields a GenGate route never sends (fal's default is kept). */
const FAL_OMIT = {
  sync_mode: "when on, fal returns the file inside its answer instead of a link GenGate downloads (fal's default, off, is kept)",
};

/** The input schema of the endpoint's POST in fal's queue document. */
function inputSchema(doc: Record<string, unknown>, endpoint: string, from: string): Record<string, unknown> {
  const paths = isObject(doc.paths) ? doc.paths : {};
  const post = (p: unknown) => (isObject(p) && isObject(p.post) ? p.post : undefined);
  const op =
    post(paths[`/${endpoint}`]) ??
    Object.values(paths)
      .map(post)
      .find((o) => o && isObject(o.requestBody));
  const body = op && isObject(op.requestBody) && isObject(op.requestBody.content) ? op.requestBody.content['application/json'] : undefined;
  if (!isObject(body) || !isObject(body.schema)) {
    throw new ImportError(`fal's OpenAPI document at ${from} has no request body schema for POST /${endpoint} (paths["/${endpoint}"].post.requestBody)`);
  }
  return resolver(doc)(body.schema);
}

async function falCost(endpoint: string, opts: ReadOptions): Promise<{ cost?: Cost; costNote?: string }> {
  const page = `https://fal.ai/models/${endpoint}`;
  const key = opts.secrets[opts.keyEnv];
  if (!key) return { costNote: `fal publishes prices to an API key: set ${opts.keyEnv} to have them read, or see ${page}` };
  const url = `${baseOf(opts.pricingUrl, FAL_API_URL)}/v1/models/pricing?endpoint_id=${encodeURIComponent(endpoint)}`;
  try {
    const got = await get(url, `fal's price of ${endpoint}`, { authorization: `Key ${key}` });
    expectOk(got, `fal's price of ${endpoint}`, { 401: `fal refused the key in ${opts.keyEnv}`, 403: `fal refused the key in ${opts.keyEnv}` });
    const prices = jsonObject(got, `fal's price of ${endpoint}`).prices;
    const row = Array.isArray(prices) ? prices.filter(isObject).find((p) => p.endpoint_id === endpoint) : undefined;
    if (!row || typeof row.unit_price !== 'number' || typeof row.unit !== 'string')
      throw new ImportError(`fal's pricing answer at ${url} has no price of ${endpoint}`);
    return { cost: { amount: row.unit_price, unit: row.unit, currency: String(row.currency ?? 'USD'), from: `${url}, read ${opts.today}` } };
  } catch (e) {
    if (!(e instanceof ImportError)) throw e;
    opts.warn(`the listed price was not read: ${e.message}`);
    return { costNote: `fal's price could not be read (${e.message}); see ${page}` };
  }
}

export async function readFal(endpoint: string, opts: ReadOptions): Promise<Upstream> {
  const what = `fal's OpenAPI document of ${endpoint}`;
  const url = `${baseOf(opts.baseUrl, FAL_DOCS_URL)}/api/openapi/queue/openapi.json?endpoint_id=${encodeURIComponent(endpoint)}`;
  const got = await (opts.doc ? readDoc(opts.doc, what) : get(url, what));
  expectOk(got, what, { 404: `fal has no endpoint ${endpoint}` });
  const doc = jsonObject(got, what);
  const meta = isObject(doc.info) && isObject(doc.info['x-fal-metadata']) ? doc.info['x-fal-metadata'] : {};
  if (typeof meta.endpointId === 'string' && meta.endpointId !== endpoint) {
    throw new ImportError(`${what} at ${got.from} is the document of ${meta.endpointId}, not ${endpoint}`);
  }
  const inputs = mapInputs(inputSchema(doc, endpoint, got.from), resolver(doc), 'fal', FAL_OMIT);
  const category = typeof meta.category === 'string' ? meta.category : '';
  const fromCategory = kindOfCategory(category);
  const kind = opts.kind ?? fromCategory ?? kindOfWords(endpoint);
  const kindWhy = opts.kind ? 'given with --kind' : fromCategory ? `fal's category ${category}` : `guessed from the id: confirm`;
  return {
    backend: 'fal',
    routeModel: endpoint,
    id: endpoint,
    title: titleOf(endpoint),
    description: `fal's ${endpoint}${category ? ` (${category})` : ''}, imported from its OpenAPI schema.`,
    kind,
    kindWhy,
    inputs,
    from: got.from,
    ...(await falCost(endpoint, opts)),
    routeNotes: [],
  };
}
