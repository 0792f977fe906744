import { createHash } from 'node:crypto';
import { priceDisplay, priceRules, priceTiers, type Catalog, type PriceTier, type PriceUnit } from '../catalog/index.js';

/**
 * The public price list of GET /v1/pricing: every model with its prices and price rules, as
 * one JSON object (shape documented in docs/api.md). Built once per catalog and rate; the ETag
 * is a hash of the exact body, so it changes whenever a price, rule or rate changes.
 */

export interface PriceListModel {
  id: string;
  aliases: readonly string[];
  kind: string;
  enabled: boolean;
  unit: PriceUnit;
  price_by: string | null;
  tiers: PriceTier[];
  display: string;
  rules: string[];
}

export interface PriceList {
  object: 'price_list';
  currency: 'USD';
  usd_rub_rate: number;
  rounding: string;
  calculator_url: string;
  models: PriceListModel[];
}

export function priceList(catalog: Catalog, opts: { usdRubRate: number; pricingBaseUrl: string }): PriceList {
  return {
    object: 'price_list',
    currency: 'USD',
    usd_rub_rate: opts.usdRubRate,
    rounding: 'Prices are rounded up to 0.001 USD after multiplying; RUB amounts are rounded to kopecks.',
    calculator_url: `${opts.pricingBaseUrl}/v1/pricing/calculate`,
    models: catalog.models.map((m) => ({
      id: m.id,
      aliases: m.aliases,
      kind: m.kind,
      enabled: m.enabled,
      unit: m.price.unit,
      price_by: m.price.by ?? null,
      tiers: priceTiers(m, opts.usdRubRate),
      display: priceDisplay(m),
      rules: priceRules(m),
    })),
  };
}

/** The body as sent and its strong ETag. */
export function priceListBody(list: PriceList): { body: string; etag: string } {
  const body = JSON.stringify(list);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
  return { body, etag };
}
