import { parse } from 'yaml';
import { expectOk, get, ImportError, isObject, readDoc } from './fetch.js';
import { kindOfWords, titleOf } from './guess.js';
import { mapInputs, resolver } from './schema.js';
import { baseOf, type ReadOptions, type Upstream } from './upstream.js';

/**
 * kie.ai publishes no schema endpoint, but each market model's documentation page, read as markdown
 * (`https://docs.kie.ai/market/<vendor>/<page>.md`, listed in https://docs.kie.ai/llms.txt), embeds
 * the page's OpenAPI 3 document in a fenced ```yaml block under "## OpenAPI": `POST
 * /api/v1/jobs/createTask` whose body has `model` (an enum of the page's model ids) and `input` (the
 * model's input schema, fields in the page's order). `--doc` reads another page, or a saved copy of
 * one (the markdown, or the OpenAPI document alone as YAML or JSON). kie.ai lists prices in credits
 * on kie.ai/pricing, not in its API.
 */

export const KIE_DOCS_URL = 'https://docs.kie.ai';
const CREATE_TASK = '/api/v1/jobs/createTask';

/** The OpenAPI document of a page: the document itself, or the fenced YAML block of the markdown that holds one. */
function openapiOf(text: string, from: string): Record<string, unknown> {
  const blocks = [...text.matchAll(/^(`{3,}|~{3,})[ \t]*(?:ya?ml|json)\b[^\n]*\n([\s\S]*?)\n\1[ \t]*$/gm)].map((b) => b[2]!);
  for (const candidate of [text, ...blocks]) {
    if (!/^\s*["']?openapi["']?\s*:/m.test(candidate)) continue;
    let doc: unknown;
    try {
      doc = parse(candidate, { maxAliasCount: 100 });
    } catch {
      continue;
    }
    if (isObject(doc) && isObject(doc.paths)) return doc;
  }
  throw new ImportError(`kie.ai's page at ${from} holds no OpenAPI document (a \`\`\`yaml block with openapi: and paths:)`);
}

/** The page's title ("# Google - Nano Banana Edit") and its one-line summary ("> Image editing using ..."). */
function headings(text: string): { title?: string; summary?: string } {
  const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim();
  const summary = /^#\s+.+\n+>\s*(.+)$/m.exec(text)?.[1]?.trim();
  return { ...(title ? { title } : {}), ...(summary ? { summary } : {}) };
}

export async function readKie(model: string, opts: ReadOptions): Promise<Upstream> {
  const what = `kie.ai's documentation of ${model}`;
  const url = `${baseOf(opts.baseUrl, KIE_DOCS_URL)}/market/${model}.md`;
  const got = await (opts.doc ? readDoc(opts.doc, what) : get(url, what));
  expectOk(got, what, {
    404: `kie.ai has no page at this address: find ${model}'s page in https://docs.kie.ai/llms.txt and pass its address with --doc`,
  });
  const doc = openapiOf(got.text, got.from);
  const paths = doc.paths as Record<string, unknown>;
  const path = isObject(paths[CREATE_TASK]) ? paths[CREATE_TASK] : undefined;
  if (!path || !isObject(path.post)) {
    throw new ImportError(
      `kie.ai's page at ${got.from} documents ${Object.keys(paths).join(', ') || 'no call'}, not POST ${CREATE_TASK}: GenGate's kie route sends market models to ${CREATE_TASK} only`,
    );
  }
  const resolve = resolver(doc);
  const post = path.post;
  const content = isObject(post.requestBody) && isObject(post.requestBody.content) ? post.requestBody.content['application/json'] : undefined;
  const body = isObject(content) ? resolve(content.schema) : {};
  const props = isObject(body.properties) ? body.properties : {};
  const modelProp = resolve(props.model);
  const ids = [...(Array.isArray(modelProp.enum) ? modelProp.enum : []), modelProp.default, modelProp.example].filter(
    (v): v is string => typeof v === 'string',
  );
  if (ids.length > 0 && !ids.includes(model)) {
    throw new ImportError(`kie.ai's page at ${got.from} documents ${[...new Set(ids)].join(', ')}, not ${model}`);
  }
  const input = resolve(props.input);
  if (!isObject(input.properties))
    throw new ImportError(`kie.ai's page at ${got.from} has no input schema (requestBody.content["application/json"].schema.properties.input)`);
  const inputs = mapInputs(input, resolve, 'declared');
  const { title, summary } = headings(got.text);
  const description = summary ?? (typeof post.summary === 'string' ? post.summary : `kie.ai's ${model}.`);
  return {
    backend: 'kie',
    routeModel: model,
    id: model,
    title: (title ?? titleOf(model)).slice(0, 120),
    description: description.slice(0, 2000),
    kind: opts.kind ?? kindOfWords(`${model} ${title ?? ''}`),
    kindWhy: opts.kind ? 'given with --kind' : 'guessed from the id and the page title: confirm',
    inputs,
    from: got.from,
    costNote: `kie.ai lists its prices in credits on https://kie.ai/pricing (not in its API): look up ${model} there`,
    routeNotes: [],
  };
}
