import dns from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import { isBlockedAddress } from './address.js';

/** The guard's checks at connect time and its error (./guard.ts). */

/** Why an outbound request was refused or failed. */
export type NetErrorCode = 'bad_url' | 'blocked' | 'timeout' | 'too_large' | 'network';

/** An outbound request that was refused by the guard or failed on the way; `message` is safe to show to the account. */
export class NetError extends Error {
  constructor(
    readonly code: NetErrorCode,
    message: string,
    /** The HTTP status when a download was answered with something other than 2xx. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'NetError';
  }
}

/** DNS lookup that drops blocked addresses and fails when nothing else is left: the check happens when connecting, so DNS rebinding cannot pass. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const allowed = addresses.filter((a) => !isBlockedAddress(a.address));
    if (allowed.length === 0) {
      const seen = addresses.map((a) => a.address).join(', ');
      return callback(new NetError('blocked', `${hostname} resolves to ${seen}, a private, loopback, link-local or metadata address`), '', 4);
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0]!.address, allowed[0]!.family);
  });
};

/** Second line of defence: whatever way the socket connected, its peer must not be a blocked address. */
export function checkPeer(socket: Socket, fail: (e: unknown) => void): void {
  const verify = () => {
    const peer = socket.remoteAddress;
    if (peer && isBlockedAddress(peer)) fail(new NetError('blocked', `connected to ${peer}, a private, loopback, link-local or metadata address`));
  };
  if (socket.connecting) socket.once('connect', verify);
  else verify();
}

/** A host as compared against the trusted list: lower case, an IPv6 literal without its brackets. */
export function hostKey(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
}

/** A short reason for a network failure (never a stack). */
export function networkMessage(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'ECONNREFUSED') return 'connection refused';
  if (err?.code === 'ENOTFOUND') return 'host name not found';
  if (err?.code === 'ECONNRESET') return 'connection reset';
  return err?.code ? `${err.code}: ${err.message}` : String(err?.message ?? e);
}
