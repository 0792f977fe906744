import { Errors } from '../errors.js';
import { findModel, notAnUpload, roundHalfUp, type Catalog, type Decimal, type MediaFacts, type ModelDef } from '../catalog/index.js';
import { add, priceMicros, seconds, toNumber } from './exact.js';

/** The price of one task, and how it was reached. */
export interface Quote {
  /** Canonical model id. */
  readonly model: string;
  readonly unit: 'second' | 'image' | 'run';
  /** Billable units: seconds (fractional only from the calculator), images or runs. */
  readonly units: number;
  /** Seconds of the result that are billed (null unless unit is second). */
  readonly resultSeconds: number | null;
  /** Seconds of client-supplied video added to the result (null unless unit is second). */
  readonly sourceSeconds: number | null;
  /** resultSeconds + sourceSeconds (null unless unit is second). */
  readonly billableSeconds: number | null;
  /** Which rate applied: a resolution, a quality, or '*' for a flat price. */
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
  const target = model.price.sameAs && Object.hasOwn(model.price.sameAs, key) ? model.price.sameAs[key]! : key;
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
  const by = price.by;
  const fieldDefault = by ? model.fields.get(by)?.default : undefined;
  if (price.unit !== 'second') {
    const key = by ? String(input[by] ?? fieldDefault) : '*';
    const rate = rateOf(model, price.rates, key, by ?? 'model');
    return {
      model: model.id,
      unit: price.unit,
      units: 1,
      resultSeconds: null,
      sourceSeconds: null,
      billableSeconds: null,
      rateKey: key,
      rateMicros: rate,
      withClientVideo: false,
      priceMicros: priceMicros(rate, seconds(1)),
      autoLength: false,
      draftFinal: false,
    };
  }
  const draftFinal = model.draft !== undefined && typeof input.draft_task_id === 'string';
  const key = draftFinal
    ? model.draft!.finalResolution
    : input.draft === true && model.draft
      ? model.draft.resolution
      : String(input.resolution ?? fieldDefault);
  const videos = Array.isArray(input.video_urls) ? (input.video_urls as string[]) : [];
  const withClientVideo = videos.length > 0 && price.withVideo !== undefined;
  const rate = rateOf(model, withClientVideo ? price.withVideo! : price.rates, key, 'resolution');

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
