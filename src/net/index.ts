/** The network guard: every URL GenGate itself fetches goes through NetGuard (DECISIONS §14). */
export { NetGuard, NetError, type NetErrorCode, type NetGuardOptions, type FetchOptions, type FetchResult, type DownloadResult } from './guard.js';
export { isBlockedAddress } from './address.js';
export { privateNetworkNotice } from './warning.js';
