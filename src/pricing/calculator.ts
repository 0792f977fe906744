import { formatUsd, toRub, usdNumber } from '../billing/index.js';
import { AppError } from '../errors.js';
import { findModel, numberFrom, type Catalog, type ModelDef, type PriceUnit } from '../catalog/index.js';
import { quote } from './quote.js';

/**
 * GET /v1/pricing/calculate as a pure function: query parameters in, the SPEC's Price result out.
 * Each parameter is read by the model's own input field, so the calculator accepts and refuses
 * exactly what createTask does, and prices with the same quote().
 */

/** SPEC "Price result" — exactly these fields. */
export interface PriceResult {
  ok: true;
  model: string;
  unit: PriceUnit;
  params: Record<string, unknown>;
  billable_seconds: number;
  price_usd: number;
  price_rub: number;
  price_display: string;
}

export type CalculatorErrorCode = 'missing_parameter' | 'invalid_parameter' | 'unsupported_model';

/** The calculator's refusal; the route sends it as 400 `{ok: false, error: {code, message, field}}`. */
export class CalculatorError extends Error {
  constructor(
    readonly code: CalculatorErrorCode,
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'CalculatorError';
  }

  body() {
    return { ok: false as const, error: { code: this.code, message: this.message, field: this.field } };
  }
}

/** Query parameters of SPEC endpoint 8 that map onto input fields of the same name. */
const FIELD_PARAMS = ['resolution', 'quality', 'duration', 'generate_audio'] as const;
export const CALCULATOR_PARAMS = ['model', ...FIELD_PARAMS, 'reference_images', 'reference_video_seconds'] as const;
/** Stands for the client's reference videos in the quote; the calculator has only their total length. */
const REFERENCE_CLIP = 'calculator:reference-videos';

const KIND_CODE: Partial<Record<AppError['kind'], CalculatorErrorCode>> = {
  missing_field: 'missing_parameter',
  unsupported_model: 'unsupported_model',
};

/** Runs `fn`, turning an AppError from a field into a CalculatorError for `field`. */
function asParameter<T>(field: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AppError) throw new CalculatorError(KIND_CODE[e.kind] ?? 'invalid_parameter', e.message, field);
    throw e;
  }
}

/** A query parameter's single value; an empty value counts as absent. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new CalculatorError('invalid_parameter', `${name} must be given once (got ${value.length} values)`, name);
  if (value === undefined || value === null) return undefined;
  const text = String(value).trim();
  return text === '' ? undefined : text;
}

function refusal(field: string, model: ModelDef, allowed: string, got: string): CalculatorError {
  return new CalculatorError('invalid_parameter', `${field} must be ${allowed} for ${model.id} (got ${JSON.stringify(got)})`, field);
}

/** The price of a model and parameters (SPEC endpoint 8); throws CalculatorError for anything invalid. */
export function calculatePrice(catalog: Catalog, query: Record<string, unknown>, usdRubRate: number): PriceResult {
  // A model priced by a field of its own (a kie.ai market model's n_frames) takes that field as a parameter too.
  const named = typeof query.model === 'string' ? catalog.find(query.model) : undefined;
  const own = (named?.price.table ?? (named?.price.by ? [named.price.by] : [])).filter((f) => !(FIELD_PARAMS as readonly string[]).includes(f));
  for (const name of Object.keys(query)) {
    if (!(CALCULATOR_PARAMS as readonly string[]).includes(name) && !own.includes(name)) {
      throw new CalculatorError('invalid_parameter', `${name} is not a parameter of the calculator; parameters: ${CALCULATOR_PARAMS.join(', ')}`, name);
    }
  }
  const model = asParameter('model', () => findModel(catalog, single(query, 'model')));
  const input: Record<string, unknown> = {};
  const params: Record<string, unknown> = {};
  for (const name of [...FIELD_PARAMS, ...own]) {
    const field = model.fields.get(name);
    const text = single(query, name);
    if (!field) {
      if (text !== undefined) {
        throw new CalculatorError(
          'invalid_parameter',
          `${name} does not apply to ${model.id}; its price does not depend on it (got ${JSON.stringify(text)})`,
          name,
        );
      }
      continue;
    }
    const value = text === undefined ? field.default : asParameter(name, () => field.read(text, { path: name, model: model.id }));
    if (value !== undefined) {
      input[name] = value;
      params[name] = value;
    }
  }

  const images = model.media.images?.max ?? (model.media.frames ? 2 : 0);
  const refImagesText = single(query, 'reference_images');
  if (refImagesText !== undefined || images > 0) {
    const n = refImagesText === undefined ? 0 : numberFrom(refImagesText);
    if (n === null || !Number.isInteger(n) || n < 0 || n > images) {
      throw refusal('reference_images', model, images > 0 ? `a whole number from 0 to ${images}` : '0 (this model takes no photos)', refImagesText ?? '');
    }
    params.reference_images = n;
  }

  const videos = model.media.videos;
  const refSecondsText = single(query, 'reference_video_seconds');
  let media = {};
  if (refSecondsText !== undefined || videos) {
    const s = refSecondsText === undefined ? 0 : numberFrom(refSecondsText);
    const max = videos?.totalSeconds ?? 0;
    if (s === null || s < 0 || s > max) {
      const allowed = videos ? `a number of seconds from 0 to ${max} (the total of the model's reference videos)` : '0 (this model takes no videos)';
      throw refusal('reference_video_seconds', model, allowed, refSecondsText ?? '');
    }
    params.reference_video_seconds = s;
    if (s > 0) {
      input.video_urls = [REFERENCE_CLIP];
      media = { [REFERENCE_CLIP]: { kind: 'video', seconds: s } };
    }
  }

  const q = asParameter('model', () => quote(catalog, model.id, input, media));
  const rub = toRub(q.priceMicros, usdRubRate);
  return {
    ok: true,
    model: q.model,
    unit: q.unit,
    params,
    billable_seconds: q.billableSeconds ?? 0,
    price_usd: usdNumber(q.priceMicros),
    price_rub: rub,
    price_display: `$${formatUsd(q.priceMicros, 3)} (${rub.toFixed(2)} ₽)`,
  };
}
