import { z } from 'zod';
import { formatUsd, toRub, usdNumber } from '../billing/index.js';
import { mappingProperties, mappingWords } from './mapping.js';
import { PRICE_KEY_JOIN, type ModelDef, type PriceUnit } from './types.js';

/**
 * Views of the catalog for clients: the JSON Schema of each model's input, its price in words
 * and numbers, and its media limits. `/models`, `/v1/pricing` and docs/models.md all use these,
 * so they cannot disagree.
 */

/** A USD amount as text: three decimals, more only when an operator's price needs them. */
export function usdText(micros: number): string {
  return formatUsd(micros, 6).replace(/(\.\d{3}\d*?)0+$/, '$1');
}

/** One amount in the three forms clients use. */
export interface Amount {
  usd: number;
  micros: number;
  rub: number;
}

export function amount(micros: number, usdRubRate: number): Amount {
  return { usd: usdNumber(micros), micros, rub: toRub(micros, usdRubRate) };
}

/** One price tier: the input values it applies to and the rate per unit. */
export interface PriceTier {
  when: Record<string, string>;
  price: Amount;
  /** Per-second rate when the client supplies video (per-second models that take video). */
  with_client_video?: Amount;
}

/** Every tier of a model's price, including values priced like another (quality auto → medium). */
export function priceTiers(model: ModelDef, usdRubRate: number): PriceTier[] {
  const { by, table, rates, withVideo, sameAs = {} } = model.price;
  const fields = table ?? (by ? [by] : []);
  // A table over several fields lists its own keys; values priced like another are said in the rules.
  const keys = table ? Object.keys(rates) : [...Object.keys(rates), ...Object.keys(sameAs)];
  return keys.map((key) => {
    const target = !table && Object.hasOwn(sameAs, key) ? sameAs[key]! : key;
    const values = key.split(PRICE_KEY_JOIN);
    const tier: PriceTier = { when: Object.fromEntries(fields.map((f, i) => [f, values[i]!])), price: amount(rates[target]!, usdRubRate) };
    if (withVideo?.[target] !== undefined) tier.with_client_video = amount(withVideo[target], usdRubRate);
    return tier;
  });
}

const PER: Record<PriceUnit, string> = { second: '/s', image: ' per image', run: ' per run', characters: ' per character' };

/** What one rate buys, after the amount: `/s`, ` per image`, ` per 1000 characters`. */
function perUnit(price: ModelDef['price']): string {
  const block = price.per?.block ?? 1;
  return price.unit === 'characters' && block > 1 ? ` per ${block} characters` : PER[price.unit];
}

/** The price in one line, e.g. `480p $0.125/s (with client video $0.075/s) · 720p ...`. */
export function priceDisplay(model: ModelDef): string {
  const per = perUnit(model.price);
  return priceTiers(model, 1)
    .map((t) => {
      const label = Object.values(t.when).join(' ');
      const base = `${label ? `${label} ` : ''}$${usdText(t.price.micros)}${per}`;
      return t.with_client_video ? `${base} (with client video $${usdText(t.with_client_video.micros)}${per})` : base;
    })
    .join(' · ');
}

/** The price rules of a model in words (SPEC prices; DECISIONS §3–§5). */
export function priceRules(model: ModelDef): string[] {
  const { price } = model;
  const rules: string[] = [];
  const rateOf = (price.table ?? (price.by ? [price.by] : [])).map((f) => `input.${f}`).join(' and ');
  const atRate = rateOf ? ` at the rate of ${rateOf}` : ', one price whatever the parameters';
  if (price.unit === 'second') rules.push(`Billed per second of the result${rateOf ? atRate : ', one rate whatever the parameters'}.`);
  if (price.unit === 'image') rules.push(`Billed per image${atRate}.`);
  if (price.unit === 'run') rules.push(rateOf ? `One price per run${atRate}.` : 'One price per run, whatever the parameters.');
  if (price.unit === 'characters') rules.push(`Billed${perUnit(price)} of input.${price.per!.field}${atRate}; a part of a block is billed as its share.`);
  if (price.per && price.unit !== 'characters') rules.push(`The price is multiplied by input.${price.per.field}.`);
  for (const [value, like] of Object.entries(price.sameAs ?? {})) rules.push(`${price.by} "${value}" is priced as "${like}".`);
  if (price.withVideo) {
    rules.push(
      'When input.video_urls are supplied, the with-client-video rate applies and the seconds of the supplied clips (after trimming) are added to the seconds of the result.',
    );
  }
  if (model.autoLengthSeconds) {
    rules.push(
      `duration "auto" or -1: ${model.autoLengthSeconds} s are charged at creation (plus source seconds); when the video is ready the price is recalculated from its real length rounded half up and the difference is refunded.`,
    );
  }
  if (model.fields.has('video_mode') && model.media.videos) {
    rules.push('video_mode "edit": the result is as long as the first clip (after trimming); duration is ignored.');
  }
  if (model.draft) {
    rules.push(
      `draft true: rendered and billed at ${model.draft.resolution}. A draft final (draft_task_id) is rendered at ${model.draft.finalResolution} and billed for the result seconds only (source seconds are not billed again), at the with-client-video rate if the draft used client video.`,
    );
  }
  rules.push('The price is rounded up to 0.001 USD after multiplying, charged at creation and refunded in full if the task fails.');
  return rules;
}

/** Input aliases documented next to the fields they stand for. */
function aliasProperties(model: ModelDef): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (model.fields.has('aspect_ratio')) out.size = { description: 'Alias of aspect_ratio.' };
  if (model.fields.has('video_mode')) out.omni_reference_task_type = { description: 'Alias of video_mode.' };
  if (model.fields.has('web_search')) {
    out.tools = {
      type: 'array',
      description: 'Entries {"type": "web_search"}; same effect as web_search true.',
      items: { type: 'object', properties: { type: { const: 'web_search' } }, required: ['type'], additionalProperties: false },
    };
  }
  return out;
}

const schemaCache = new WeakMap<ModelDef, Record<string, unknown>>();

/** JSON Schema (2020-12) of the model's input, from its zod field schemas plus the aliases. */
export function parametersSchema(model: ModelDef): Record<string, unknown> {
  const cached = schemaCache.get(model);
  if (cached) return cached;
  const schema = z.toJSONSchema(normalisedSchema(model), { io: 'input' }) as Record<string, unknown>;
  const fields = schema.properties as Record<string, Record<string, unknown>>;
  schema.properties = { ...fields, ...aliasProperties(model), ...mappingProperties(model, fields) };
  schemaCache.set(model, schema);
  return schema;
}

/** The zod schema of a model's normalised input (what validateInput returns). */
export function normalisedSchema(model: ModelDef) {
  // Fields without a default may be absent; which of them are required together is said by the rules.
  const shape = [...model.fields].map(([name, def]) => [name, def.default === undefined ? def.schema.optional() : def.schema]);
  return z.strictObject(Object.fromEntries(shape));
}

/** Media limits of a model, in the words of the SPEC's "Media limits" table. */
export function limitsOf(model: ModelDef): Record<string, unknown> {
  const { images, frames, videos, audios } = model.media;
  const out: Record<string, unknown> = { frames: frames ?? false };
  if (images) {
    out.images = {
      field: images.field,
      min: images.min,
      max: images.max,
      formats: images.formats,
      public_link_formats: [...images.formats, ...images.linkFormats],
      asset_ids: images.assets,
      upload_max_mb: images.uploadMb,
    };
  }
  if (videos) {
    out.videos = {
      field: 'video_urls',
      max: videos.max,
      total_seconds: videos.totalSeconds,
      clip_seconds: videos.clipSeconds,
      formats: videos.formats,
      upload_max_mb: videos.uploadMb,
    };
  }
  if (audios) {
    out.audios = {
      field: 'audio_urls',
      max: audios.max,
      total_seconds: audios.totalSeconds,
      formats: audios.formats,
      upload_max_mb: audios.uploadMb,
      alone: audios.alone,
    };
  }
  return out;
}

/** Each name with an input mapping (kie.ai ids, operator aliases) and its mapping in words, for `/models` and MCP. */
export function inputMappings(model: ModelDef): Record<string, string[]> {
  return Object.fromEntries([...model.inputMaps].map(([name, map]) => [name, mappingWords(model, map).map((w) => w.replace(/`/g, ''))]));
}
