import type { ModelKind } from '../types.js';
import type { MappedInputs } from './schema.js';

/** What each upstream reader (fal.ts, replicate.ts, kie.ts) gives the drafter (draft.ts). */

/** The upstream's listed cost of one unit, as its pricing source says it. */
export interface Cost {
  readonly amount: number;
  /** The upstream's own unit words ("image", "megapixels", "second", "1000 characters"). */
  readonly unit: string;
  readonly currency: string;
  /** Where and when it was read, for the draft's comment. */
  readonly from: string;
}

export interface Upstream {
  readonly backend: 'fal' | 'replicate' | 'kie';
  /** The route's `model`: fal's endpoint id, Replicate's owner/name:version, kie.ai's model id. */
  readonly routeModel: string;
  /** The id the draft proposes (the operator's `--id` wins). */
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly kind: ModelKind;
  /** Why this kind: the upstream's category, or a guess from the words. */
  readonly kindWhy: string;
  readonly inputs: MappedInputs;
  /** Where the schema was read. */
  readonly from: string;
  readonly cost?: Cost;
  /** Where the price is published when no cost was read, or why it was not. */
  readonly costNote?: string;
  /** Words for the route's comment (a pinned version, say). */
  readonly routeNotes: readonly string[];
}

/** What the readers need besides the upstream's own name. */
export interface ReadOptions {
  /** The upstream's address for its schema (tests point it at a fake on loopback). */
  readonly baseUrl?: string;
  /** fal: the address of its pricing API. */
  readonly pricingUrl?: string;
  /** A file or address of the document to read instead of the default one. */
  readonly doc?: string;
  /** The setting holding the credential (also the route's key_env). */
  readonly keyEnv: string;
  /** Settings that may hold credentials (the environment, GENGATE_CONFIG). */
  readonly secrets: Readonly<Record<string, string>>;
  readonly kind?: ModelKind;
  /** Today, for "read on" in the draft. */
  readonly today: string;
  /** Things the operator should know that do not stop the import (printed on standard error). */
  readonly warn: (text: string) => void;
}

/** The address with its trailing slashes dropped. */
export const baseOf = (given: string | undefined, fallback: string) => (given ?? fallback).replace(/\/+$/, '');
