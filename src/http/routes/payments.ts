import type { FastifyError, FastifyInstance } from 'fastify';
import { failure } from '../../api/index.js';
import { cancelPage, ForgedEvent, successPage } from '../../payments/index.js';
import type { Services } from '../../services.js';
import { limitPublic } from '../limits.js';

/** Largest webhook body accepted; Stripe's events are a few KB. */
export const WEBHOOK_MAX_BYTES = 1024 * 1024;

const html = 'text/html; charset=utf-8';

/**
 * The pages Stripe Checkout returns to (GET /topup/success, /topup/cancel; they never credit anything;
 * the top-up page /topup itself is the console's, src/http/routes/console.ts) and,
 * when STRIPE_SECRET_KEY is set, Stripe's webhook (POST /stripe/webhook): the raw body is verified
 * against its signature before anything is read from it (decision 1904).
 */
export function registerPaymentRoutes(app: FastifyInstance, services: Services) {
  const { config, payments } = services;
  // Public pages, limited per client address like every public read; the webhook is not (Stripe retries a refusal, and a forged call is refused before any work).
  const limited = { onRequest: limitPublic(services) };
  app.get('/topup/success', limited, async (_req, reply) => reply.type(html).send(successPage()));
  app.get('/topup/cancel', limited, async (_req, reply) => reply.type(html).send(cancelPage(config.TOPUP_URL)));
  if (!config.STRIPE_SECRET_KEY) return;

  app.register(async (scope) => {
    // The signature covers the exact bytes Stripe sent: nothing may parse them first.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_MAX_BYTES }, (_req, body, done) => done(null, body));
    scope.setErrorHandler((err: FastifyError, _req, reply) => {
      if (err instanceof ForgedEvent) return reply.code(400).send(failure(400, 'invalid_signature', err.message));
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return reply.code(413).send(failure(413, 'payload_too_large', `a webhook event may be at most ${WEBHOOK_MAX_BYTES} bytes`));
      }
      throw err;
    });
    scope.post('/stripe/webhook', { bodyLimit: WEBHOOK_MAX_BYTES }, async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const signature = req.headers['stripe-signature'];
      const event = payments.verify(raw, typeof signature === 'string' ? signature : undefined);
      const outcome = await payments.events.handle(event);
      req.log.info({ stripeEvent: event.id, type: event.type, outcome }, 'stripe event');
      return reply.send({ received: true, outcome });
    });
  });
}
