import { z } from 'zod';
import { KIE_SUNO_VERSIONS } from '../../catalog/index.js';
import { callBackUrl } from '../../tasks/index.js';
import { createdReply, idempotencyHeader, idempotencyKey } from '../tasks/create-task.js';
import type { KeyedOperation } from '../operation.js';
import * as S from '../schemas.js';

const weight = z.union([z.number(), z.string()]).describe('0 to 1 in steps of 0.05, or "auto" (custom mode only)');

/** kie.ai's Suno body as documented in the OpenAPI document (the rules themselves are suno-v6's, applied through src/catalog/kie-suno.ts). */
const sunoBody = z.object({
  prompt: z
    .string()
    .describe('Without custom mode: the subject, up to 3000 characters. With custom mode: the lyrics, up to 5000 (not needed for instrumental)'),
  customMode: z.boolean().optional().describe('Own lyrics and the settings below; title then required. Default false'),
  instrumental: z.boolean().optional().describe('No vocals. Default false'),
  model: z
    .enum(Object.keys(KIE_SUNO_VERSIONS) as [string, ...string[]])
    .describe(
      'kie.ai model value; selects the suno-v6 version of the same name with custom mode (without it suno-v6 runs its default version v6, as its rules say)',
    ),
  style: z.string().optional().describe('Genre, instruments, mood (custom mode only)'),
  title: z.string().optional().describe('Up to 80 characters; required with custom mode'),
  negativeTags: z.string().optional().describe('What to avoid (custom mode only)'),
  vocalGender: z.enum(['m', 'f']).optional().describe('m or f (custom mode only)'),
  styleWeight: weight.optional(),
  weirdnessConstraint: weight.optional(),
  audioWeight: weight.optional().describe('0 to 1 in steps of 0.05, or "auto"; custom mode only and not for instrumental'),
  callBackUrl: callBackUrl.optional(),
});

/** POST /api/v1/generate: kie.ai's Suno endpoint, an ordinary suno-v6 task (DECISIONS §18, decision 0404). */
export const sunoGenerate: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/generate',
    id: 'sunoGenerate',
    tag: 'kie.ai compatibility',
    auth: 'key',
    scope: 'tasks:write',
    summary: "Create a suno-v6 task with kie.ai's Suno body",
    description:
      'For clients of kie.ai\'s Suno API. The body is mapped to suno-v6 (customMode → custom_mode, negativeTags → negative_tags, vocalGender m/f → vocal_gender male/female, styleWeight, weirdnessConstraint, audioWeight → their snake_case fields, model → version) and charged, refunded and rate-limited exactly like the same suno-v6 body through createTask. Refusals name the field as sent. Callbacks of the task use kie.ai\'s Suno callback shape (callbackType "complete" or "error"), signed like every GenGate callback.',
    headers: { 'Idempotency-Key': idempotencyKey.optional() },
    body: sunoBody,
    ok: { schema: S.SunoCreated, envelope: true, description: 'Task created (or the same task again for a repeated Idempotency-Key)' },
    errors: ['invalid_request', 'missing_field', 'unsupported_model', 'content_rejected', 'insufficient_balance', 'model_disabled', 'upstream_limit'],
  },
  handler:
    (services) =>
    async ({ principal, body, headers }) => {
      const created = await services.tasks.createSuno(principal, body, idempotencyHeader(headers));
      return createdReply(created, { taskId: created.taskId });
    },
};
