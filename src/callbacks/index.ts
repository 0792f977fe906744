/** Task-completion callbacks: the durable delivery worker, the body and the two signatures (DECISIONS §14). */
import { Errors } from '../errors.js';
import { NetError, type NetGuard } from '../net/index.js';
export { CallbackWorker, type CallbackDeps, type CallbackSettings } from './worker.js';
export { callbackBody, webhookId, attemptDelivery, type Attempt, type Delivery } from './deliver.js';
export { signatureHeaders, legacySignature, type SigningKeys } from './signing.js';
export { Webhooks, REDELIVER_REPEAT_MS, type DeliveryLog } from './manual.js';
export { EventWorker, eventWebhookId } from './events.js';
export type { AttemptView } from './log.js';
export { pruneAttempts } from './retention.js';

/** Parses CALLBACK_RETRY_DELAYS_MS ("5000,30000,...") into the waits before each retry. */
export function retryDelays(setting: string): number[] {
  return setting.split(',').map((n) => Number(n.trim()));
}

/** The createTask check of a callBackUrl (and of an alert's url): 400 when it can only reach addresses the guard refuses. */
export function callbackUrlCheck(guard: NetGuard, field = 'callBackUrl'): (url: string) => Promise<void> {
  return async (url) => {
    try {
      await guard.check(url);
    } catch (e) {
      if (e instanceof NetError) throw Errors.invalid(`${field} must reach a public address: ${e.message} (got ${JSON.stringify(url)})`);
      throw e;
    }
  };
}
