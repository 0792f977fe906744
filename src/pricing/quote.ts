import { Errors } from '../errors.js';
import {
  characterCount,
  findModel,
  notAnUpload,
  roundHalfUp,
  PRICE_KEY_JOIN,
  type Catalog,
  type Decimal,
  type MediaFacts,
  type ModelDef,
  type PriceUnit,
} from '../catalog/index.js';
import { add, priceMicros, seconds, toNumber } from './exact.js';

/** The price of one task, and how it was reached. */
export interface Quote {
  /** Canonical model id. */
  readonly model: string;
  readonly unit: PriceUnit;
  /** Billable units: seconds (fractional only from the calculator), images, runs or characters (in blocks). */
  readonly units: number;
  /** Seconds of the result that are billed (null unless unit is second). */
  readonly resultSeconds: number | null;
  /** Seconds of client-supplied video added to the result (null unless unit is second). */
  readonly sourceSeconds: number | null;
  /** resultSeconds + sourceSeconds (null unless unit is second). */
  readonly billableSeconds: number | null;
  /** Which rate applied: a resolution, a quality, values of a table joined with PRICE_KEY_JOIN, or '*' for a flat price. */
  readonly rateKey: string;
  readonly rateMicros: number;
  /** The with-client-video rate applied. */
  readonly withClientVideo: boolean;
  /** rate × units rounded up to 0.001 USD, in micro-USD. */
  readonly priceMicros: number;
  /** Charged at the automatic maximum length; re-price with settleAutoLength when the real length is known. */
  readonly autoLength: boolean;
  /** A draft final: rendered at the final resolution, source seconds not billed again. */
  readonly draftFinal: boolean;
}

const NONE: MediaFacts = {};

function rateOf(model: ModelDef, table: Readonly<Record<string, number>>, key: string, field: string): number {
  const { sameAs, table: fields } = model.price;
  const like = (v: string) => (sameAs && Object.hasOwn(sameAs, v) ? sameAs[v]! : v);
  const target = fields ? key.split(PRICE_KEY_JOIN).map(like).join(PRICE_KEY_JOIN) : like(key);
  const rate = Object.hasOwn(table, target) ? table[target] : undefined;
  if (rate === undefined) {
    throw Errors.invalid(
      `input.${field} must be one of ${Object.keys(table)
        .map((k) => `"${k}"`)
        .join(', ')} for ${model.id} (got "${key}")`,
    );
  }
  return rate;
}

/** The value a price field has: sent, else its default; for a draft, its render resolution. */
function priceValue(model: ModelDef, input: Readonly<Record<string, unknown>>, field: string, draftFinal: boolean): string {
  if (field === 'resolution' && model.draft) {
    if (draftFinal) return model.draft.finalResolution;
    if (input.draft === true) return model.draft.resolution;
  }
  return String(input[field] ?? model.fields.get(field)?.default);
}

/** The rate key of an input: '*' for a flat price, else the value of each price field. */
function rateKey(model: ModelDef, input: Readonly<Record<string, unknown>>, draftFinal: boolean): string {
  const { by, table } = model.price;
  if (!by) return '*';
  return (table ?? [by]).map((f) => priceValue(model, input, f, draftFinal)).join(PRICE_KEY_JOIN);
}

/** The quantity of a price with `per`: the field's number, or its characters in blocks (exact). */
function perQuantity(model: ModelDef, input: Readonly<Record<string, unknown>>): Decimal {
  const { field, block } = model.price.per!;
  const value = input[field] ?? model.fields.get(field)?.default;
  if (model.price.unit === 'characters') {
    const count = typeof value === 'string' ? characterCount(value, 0) : 0;
    return { digits: BigInt(count), scale: Math.round(Math.log10(block)) };
  }
  if (typeof value !== 'number') throw Errors.invalid(`input.${field} must be a number for ${model.id} (got ${JSON.stringify(value)})`);
  return seconds(value);
}

/** Seconds of the supplied clip at `index` (after trimming), from the media facts. */
function clipSeconds(model: ModelDef, videos: readonly string[], index: number, media: MediaFacts): Decimal {
  const url = videos[index]!;
  const fact = Object.hasOwn(media, url) ? media[url] : undefined;
  if (fact?.seconds === undefined || !(fact.seconds >= 0)) throw notAnUpload(`input.video_urls[${index}]`, model.id, url);
  return seconds(fact.seconds);
}

/**
 * The price of a validated, normalised input (SPEC prices; DECISIONS §3–§5). `media` are the
 * facts after trimming (ValidatedInput.media.facts); they are needed when video_urls are given.
 * Pure and integer-exact; createTask and the calculator both use it.
 */
export function quote(catalog: Catalog, modelName: string, input: Readonly<Record<string, unknown>>, media: MediaFacts = NONE): Quote {
  const model = findModel(catalog, modelName);
  const { price } = model;
  const draftFinal = model.draft !== undefined && typeof input.draft_task_id === 'string';
  const key = rateKey(model, input, draftFinal);
  if (price.unit !== 'second') {
    const rate = rateOf(model, price.rates, key, price.table ? price.table.join(' / ') : (price.by ?? 'model'));
    const quantity = price.per ? perQuantity(model, input) : seconds(1);
    return {
      model: model.id,
      unit: price.unit,
      units: toNumber(quantity),
      resultSeconds: null,
      sourceSeconds: null,
      billableSeconds: null,
      rateKey: key,
      rateMicros: rate,
      withClientVideo: false,
      priceMicros: priceMicros(rate, quantity),
      autoLength: false,
      draftFinal: false,
    };
  }
  const videos = Array.isArray(input.video_urls) ? (input.video_urls as string[]) : [];
  const withClientVideo = videos.length > 0 && price.withVideo !== undefined;
  const rate = rateOf(model, withClientVideo ? price.withVideo! : price.rates, key, price.by ?? 'resolution');

  const duration = input.duration ?? model.fields.get('duration')?.default;
  const autoLength = duration === 'auto' && input.video_mode !== 'edit';
  let result: Decimal;
  if (input.video_mode === 'edit' && videos.length > 0) result = clipSeconds(model, videos, 0, media);
  else if (autoLength) result = seconds(model.autoLengthSeconds ?? 0);
  else if (typeof duration === 'number') result = seconds(duration);
  else throw Errors.invalid(`input.duration must be a number of seconds for ${model.id} (got ${JSON.stringify(duration)})`);

  let source = seconds(0);
  if (withClientVideo && !draftFinal) {
    for (let i = 0; i < videos.length; i++) source = add(source, clipSeconds(model, videos, i, media));
  }
  const billable = add(result, source);
  return {
    model: model.id,
    unit: 'second',
    units: toNumber(billable),
    resultSeconds: toNumber(result),
    sourceSeconds: toNumber(source),
    billableSeconds: toNumber(billable),
    rateKey: key,
    rateMicros: rate,
    withClientVideo,
    priceMicros: priceMicros(rate, billable),
    autoLength,
    draftFinal,
  };
}

/**
 * The final price of an automatic-length task once its real length is known (DECISIONS §5):
 * the real seconds rounded half up (never above the charged maximum) plus the same source seconds.
 * The lifecycle refunds `charged − settled.priceMicros` as a partial refund.
 */
export function settleAutoLength(catalog: Catalog, modelName: string, input: Readonly<Record<string, unknown>>, media: MediaFacts, realSeconds: number): Quote {
  if (!Number.isFinite(realSeconds) || realSeconds < 0) throw new Error(`real length must be a non-negative number (got ${realSeconds})`);
  const model = findModel(catalog, modelName);
  const charged = quote(catalog, modelName, input, media);
  if (!charged.autoLength) return charged;
  const real = Math.min(model.autoLengthSeconds ?? 0, Math.max(1, roundHalfUp(realSeconds)));
  return { ...quote(catalog, modelName, { ...input, duration: real }, media), autoLength: false };
}
