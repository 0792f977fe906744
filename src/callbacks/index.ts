/** Task-completion callbacks: the durable delivery worker, the body and the two signatures (DECISIONS §14). */
import { Errors } from '../errors.js';
import { NetError, type NetGuard } from '../net/index.js';
export { CallbackWorker, type CallbackDeps, type CallbackSettings } from './worker.js';
export { callbackBody, webhookId, attemptDelivery, type Attempt } from './deliver.js';
export { signatureHeaders, legacySignature } from './signing.js';

/** Parses CALLBACK_RETRY_DELAYS_MS ("5000,30000,...") into the waits before each retry. */
export function retryDelays(setting: string): number[] {
  return setting.split(',').map((n) => Number(n.trim()));
}

/** The createTask check of a callBackUrl: 400 when it can only reach addresses the guard refuses. */
export function callbackUrlCheck(guard: NetGuard): (url: string) => Promise<void> {
  return async (url) => {
    try {
      await guard.check(url);
    } catch (e) {
      if (e instanceof NetError) throw Errors.invalid(`callBackUrl must reach a public address: ${e.message} (got ${JSON.stringify(url)})`);
      throw e;
    }
  };
}
