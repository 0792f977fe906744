import Stripe from 'stripe';
import type { Config } from '../config.js';

/**
 * The Stripe API client, or null when STRIPE_SECRET_KEY is not set. STRIPE_API_BASE (tests, a
 * proxy) replaces api.stripe.com by host, port and protocol. Stripe's own address is the
 * operator's setting, not a client's, so this client does not go through net/'s guard (which
 * checks addresses clients give); decision 1904.
 */
export function stripeClient(config: Pick<Config, 'STRIPE_SECRET_KEY' | 'STRIPE_API_BASE'>): Stripe | null {
  if (!config.STRIPE_SECRET_KEY) return null;
  const base = config.STRIPE_API_BASE ? new URL(config.STRIPE_API_BASE) : null;
  return new Stripe(config.STRIPE_SECRET_KEY, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    ...(base && {
      host: base.hostname,
      port: base.port || (base.protocol === 'https:' ? 443 : 80),
      protocol: base.protocol === 'https:' ? 'https' : 'http',
    }),
  });
}

export type { Stripe };
