import type { Config } from '../config.js';

/**
 * Fastify's `trustProxy` from the settings (decision 2310). TRUSTED_PROXIES: the client address is
 * the rightmost X-Forwarded-For hop that is not one of the listed proxies (a client cannot spoof
 * it by sending its own header: the proxies append to it). TRUST_PROXY=true alone: exactly one
 * proxy in front, so the client is the rightmost hop (the one the proxy appended), never the
 * leftmost one the client wrote. Neither: the socket's address, X-Forwarded-For ignored.
 */
export function trustProxy(config: Pick<Config, 'TRUST_PROXY' | 'TRUSTED_PROXIES'>): string[] | ((address: string, hop: number) => boolean) | false {
  if (config.TRUSTED_PROXIES.length > 0) return config.TRUSTED_PROXIES;
  // Hop 0 is the socket's peer (the proxy); hop 1, the address it appended, is not trusted: it is the client.
  return config.TRUST_PROXY ? (_address, hop) => hop < 1 : false;
}
