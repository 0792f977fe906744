import { expectOk, get, ImportError, isObject, jsonObject, readDoc } from './fetch.js';
import { kindOfWords, titleOf } from './guess.js';
import { mapInputs, resolver } from './schema.js';
import { baseOf, type ReadOptions, type Upstream } from './upstream.js';

/**
 * Replicate: `GET https://api.replicate.com/v1/models/{owner}/{name}` with `Authorization: Bearer
 * <REPLICATE_API_TOKEN>` → the model `{owner, name, description, latest_version: {id,
 * openapi_schema}}`; the version's OpenAPI schema holds the input at components.schemas.Input,
 * fields ordered by `x-order`, enums as `allOf: [{$ref}]` to their own schemas. Replicate's API
 * publishes no prices (official models are priced per output on their pages, the others per second
 * of hardware on replicate.com/pricing), so the draft says where to look.
 */

export const REPLICATE_API_URL = 'https://api.replicate.com';

export async function readReplicate(model: string, opts: ReadOptions): Promise<Upstream> {
  const m = /^([A-Za-z0-9][\w.-]*)\/([A-Za-z0-9][\w.-]*)$/.exec(model);
  if (!m) throw new ImportError(`replicate:${model}: a Replicate model is replicate:OWNER/NAME, e.g. replicate:black-forest-labs/flux-schnell`);
  const [, owner, name] = m;
  const what = `Replicate's model ${model}`;
  const token = opts.secrets[opts.keyEnv];
  let got;
  // A document named with --doc is read without the token: it goes only to Replicate's own address.
  if (opts.doc) got = await readDoc(opts.doc, what);
  else {
    if (!token) throw new ImportError(`${what}: Replicate's API needs a token: set ${opts.keyEnv} (or name another setting with --key-env)`);
    const url = `${baseOf(opts.baseUrl, REPLICATE_API_URL)}/v1/models/${encodeURIComponent(owner!)}/${encodeURIComponent(name!)}`;
    got = await get(url, what, { authorization: `Bearer ${token}` });
  }
  expectOk(got, what, {
    404: `Replicate has no model ${model}`,
    401: `Replicate refused the token in ${opts.keyEnv}`,
    403: `Replicate refused the token in ${opts.keyEnv}`,
  });
  const data = jsonObject(got, what);
  const version = isObject(data.latest_version) ? data.latest_version : undefined;
  if (!version) throw new ImportError(`${what} at ${got.from} has no published version (latest_version is empty)`);
  const schema = isObject(version.openapi_schema) ? version.openapi_schema : undefined;
  const components = schema && isObject(schema.components) && isObject(schema.components.schemas) ? schema.components.schemas : undefined;
  if (!schema || !components || !isObject(components.Input)) {
    throw new ImportError(`${what} at ${got.from} has no input schema (latest_version.openapi_schema.components.schemas.Input)`);
  }
  const resolve = resolver(schema);
  const inputs = mapInputs(resolve(components.Input), resolve, 'replicate');
  const description = typeof data.description === 'string' && data.description.trim() ? data.description.replace(/\s+/g, ' ').trim() : `Replicate's ${model}.`;
  const id = typeof version.id === 'string' && /^[a-f0-9]{64}$/.test(version.id) ? version.id : undefined;
  return {
    backend: 'replicate',
    routeModel: id ? `${model}:${id}` : model,
    id: model,
    title: titleOf(name!),
    description: description.length > 2000 ? `${description.slice(0, 1999)}…` : description,
    kind: opts.kind ?? kindOfWords(`${model} ${description}`),
    kindWhy: opts.kind ? 'given with --kind' : 'guessed from the name and description: confirm',
    inputs,
    from: got.from,
    costNote: `Replicate's API publishes no price: see https://replicate.com/${model} (official models: a price per output) or https://replicate.com/pricing (other models: per second of the hardware they run on)`,
    routeNotes: id
      ? [`pinned to version ${id.slice(0, 12)}…, whose schema this is; an official model may use ${model} alone (its latest version)`]
      : [`runs ${model} at its latest version (the document named no version id)`],
  };
}
