import { PRICE_PLACEHOLDER } from '../compile-price.js';
import type { FieldSpec } from '../format.js';
import type { DraftField } from './schema.js';
import type { Upstream } from './upstream.js';

/**
 * The `price` of an imported draft (decision 3303): the shape that fits the upstream's billing unit
 * and the model's inputs (per image, per second of `duration`, a table over a `duration` choice,
 * per characters of the text, else per run), every amount the placeholder SET-PRICE, which the
 * compiler refuses, and the upstream's listed cost in the comments beside it.
 */

export interface DraftPrice {
  readonly price: Record<string, unknown>;
  /** Lines of the comment above `price`. */
  readonly notes: readonly string[];
  /** Rate key → the upstream's cost of that row, written beside it. */
  readonly rowNotes: Readonly<Record<string, string>>;
}

type Unit = 'second' | 'minute' | 'image' | 'megapixel' | 'characters' | 'run' | 'other';

/** The upstream's unit words → what a GenGate price can be built on. */
function unitOf(words: string): { unit: Unit; block?: number } {
  const w = words.toLowerCase();
  if (/compute|gpu/.test(w)) return { unit: 'other' };
  if (/second/.test(w)) return { unit: 'second' };
  if (/minute/.test(w)) return { unit: 'minute' };
  if (/megapixel/.test(w)) return { unit: 'megapixel' };
  const chars = /(\d[\d,]*)?\s*(k\s*)?char/.exec(w);
  if (chars) return { unit: 'characters', block: chars[1] ? Number(chars[1].replace(/,/g, '')) * (chars[2] ? 1000 : 1) : 1 };
  if (/image/.test(w)) return { unit: 'image' };
  if (/video|request|run|generation|call|output/.test(w)) return { unit: 'run' };
  return { unit: 'other' };
}

/** "$0.025" with the digits the upstream gave (at most 6 decimals). */
export const usd = (n: number) => `$${Number(n.toFixed(6))}`;

const BLOCKS = [1, 10, 100, 1000, 1_000_000] as const;

/** The text a per-character price counts: a required text named like the words to speak. */
function textField(fields: readonly DraftField[]): string | undefined {
  const texts = fields.filter((f) => f.spec.type === 'text' && f.spec.required);
  return (texts.find((f) => /^(text|input|prompt|script|lyrics)$/.test(f.name)) ?? texts[0])?.name;
}

export function draftPrice(up: Upstream): DraftPrice {
  const fields = up.inputs.fields;
  const cost = up.cost;
  const notes = [`TODO: set your price where ${PRICE_PLACEHOLDER} stands; until then this model is refused at load (decision 3303).`];
  notes.push(
    cost ? `Upstream cost: ${up.backend} lists ${usd(cost.amount)} ${cost.currency} per ${cost.unit} (${cost.from}).` : `Upstream cost: ${up.costNote}.`,
  );
  const { unit, block } = cost ? unitOf(cost.unit) : { unit: 'other' as Unit, block: undefined };
  const duration = fields.find((f) => f.name === 'duration')?.spec;
  const perSecond = unit === 'second' ? cost!.amount : unit === 'minute' ? cost!.amount / 60 : undefined;
  const flat = (priceUnit: string, extra: Record<string, unknown> = {}) => ({ unit: priceUnit, ...extra, rate: PRICE_PLACEHOLDER });

  if (perSecond !== undefined) {
    if (isWholeDuration(duration)) {
      notes.push(`Billed per second of duration, as ${up.backend} bills (${usd(perSecond)} a second).`);
      return { price: flat('second'), notes, rowNotes: {} };
    }
    const seconds = duration?.type === 'choice' ? duration.values.map((v) => [v, Number(v)] as const) : [];
    if (seconds.length > 0 && seconds.every(([, n]) => Number.isFinite(n) && n > 0)) {
      notes.push(`A price per run for each duration, as ${up.backend} bills per second (${usd(perSecond)} a second).`);
      return {
        price: { unit: 'run', by: 'duration', rates: Object.fromEntries(seconds.map(([v]) => [v, PRICE_PLACEHOLDER])) },
        notes,
        rowNotes: Object.fromEntries(seconds.map(([v, n]) => [v, `upstream cost ${usd(perSecond * n)} (${n} s × ${usd(perSecond)})`])),
      };
    }
    notes.push(`The upstream bills per second of output but the model has no duration input to bill by: price a run for the longest output.`);
    return { price: flat('run'), notes, rowNotes: {} };
  }
  if (unit === 'characters') {
    const field = textField(fields);
    const per = BLOCKS.find((b) => b >= (block ?? 1)) ?? 1000;
    if (field) {
      notes.push(`Billed per ${per} characters of ${field}${per !== block ? ` (the upstream counts per ${block})` : ''}.`);
      return { price: flat('characters', { per: { field, block: per } }), notes, rowNotes: {} };
    }
  }
  if (unit === 'megapixel') notes.push(`The upstream bills per megapixel: ${usd(cost!.amount)} is a 1-megapixel image; price the largest size you allow.`);
  if (unit === 'other' && cost) notes.push(`The upstream's unit (${cost.unit}) has no GenGate equivalent: price one run.`);
  return { price: flat(up.kind === 'image' ? 'image' : 'run'), notes, rowNotes: {} };
}

/** A `duration` a per-second price can read: a whole number with a default (or required). */
function isWholeDuration(spec: FieldSpec | undefined): boolean {
  return spec?.type === 'integer' && spec.min >= 0 && (spec.default !== undefined || spec.required === true);
}
