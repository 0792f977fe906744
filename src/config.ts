import { readFileSync } from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { tracingSettings } from './tracing/index.js';
import { shownSetting } from './secret-settings.js';

/** Thrown when the settings are wrong; main prints the message and exits with code 2. */
export class ConfigError extends Error {}

const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])]).transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');
/** A yes/no setting with its default; a wrong value is refused naming what is allowed. */
const flag = (byDefault: boolean) => bool.default(byDefault).describe('true or false (also 1/0, yes/no)');

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must start with http:// or https://')
  .transform((u) => u.replace(/\/+$/, ''));

/** A TRUSTED_PROXIES entry: an IP address, a CIDR range, or a named range proxy-addr knows. */
function proxyEntry(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  if (entry.includes('/')) {
    try {
      ipaddr.parseCIDR(entry);
      return true;
    } catch {
      return false;
    }
  }
  return ipaddr.isValid(entry);
}

/** Every setting GenGate reads, with its default. The README table documents the same list. */
export const configSchema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080).describe('a whole number from 0 to 65535'),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATA_DIR: z.string().min(1).default('./data'),
    DATABASE_URL: z
      .string()
      .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must be a postgres:// URL or sqlite:<path>')
      .optional(),
    DATABASE_PREPARED: flag(true),
    DATABASE_GUARDS: bool.optional().describe('true or false (also 1/0, yes/no)'),
    DATABASE_SLOW_TX_MS: z.coerce.number().int().min(0).max(60_000).optional().describe('a whole number of milliseconds from 0 to 60000'),
    PUBLIC_BASE_URL: httpUrl.optional(),
    PRICING_BASE_URL: httpUrl.optional(),
    ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    GENGATE_SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    GENGATE_SECRET_KEY_PREVIOUS: z.string().optional(),
    METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    ERROR_STYLE: z.enum(['default', 'reference']).default('default'),
    USD_RUB_RATE: z.coerce.number().positive().max(1_000_000).default(90).describe('a positive number of RUB per USD'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    TOPUP_URL: httpUrl.optional(),
    STRIPE_SECRET_KEY: z
      .string()
      .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/, 'must be a Stripe secret or restricted key (sk_live_..., sk_test_..., rk_...)')
      .optional(),
    STRIPE_WEBHOOK_SECRET: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/=]+$/, 'must be the signing secret of the webhook endpoint (whsec_...)')
      .optional(),
    STRIPE_API_BASE: httpUrl.optional(),
    TOPUP_PRESETS: z
      .string()
      .regex(/^\d+(\.\d{1,2})?(,\d+(\.\d{1,2})?)*$/, 'must be comma-separated USD amounts such as 10,25,100')
      .default('10,25,100')
      .describe('comma-separated USD amounts such as 10,25,100'),
    TOPUP_MIN: z.coerce.number().min(0.5).max(1_000_000).default(5).describe('a USD amount from 0.5 to 1000000'),
    TOPUP_MAX: z.coerce.number().min(0.5).max(1_000_000).default(1000).describe('a USD amount from 0.5 to 1000000'),
    BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024)
      .describe('a whole number of bytes from 1024 to 67108864'),
    FIRST_RUN_ACCOUNT: flag(true),
    GENGATE_CATALOG: z.string().min(1).optional(),
    GENGATE_MODELS: z.string().min(1).optional(),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .optional(),
    RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(10).describe('a whole number of seconds from 1 to 3600'),
    RATE_LIMIT_WRITE: z.coerce.number().int().min(1).max(1_000_000_000).default(20).describe('a whole number of requests from 1 to 1000000000'),
    RATE_LIMIT_READ: z.coerce.number().int().min(1).max(1_000_000_000).default(100).describe('a whole number of requests from 1 to 1000000000'),
    RATE_LIMIT_PUBLIC: z.coerce.number().int().min(1).max(1_000_000_000).default(300).describe('a whole number of requests from 1 to 1000000000'),
    TRUST_PROXY: flag(false),
    TRUSTED_PROXIES: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
      )
      .refine(
        (list) => list.every(proxyEntry),
        'must be comma-separated proxy addresses or CIDR ranges such as 10.0.0.5,10.1.0.0/16,fd00::/8 (or loopback, linklocal, uniquelocal)',
      )
      .describe('comma-separated proxy addresses or CIDR ranges such as 10.0.0.5,10.1.0.0/16'),
    CORS_ORIGINS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((o) => o.trim().replace(/\/+$/, ''))
          .filter(Boolean),
      )
      .refine(
        (list) => list.every((o) => /^https?:\/\/[^/\s?#@]+$/i.test(o)),
        'must be comma-separated origins such as https://app.example.com (scheme, host and port only)',
      )
      .describe('comma-separated origins such as https://app.example.com'),
    HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000).describe('a whole number of milliseconds from 100 to 600000'),
    HTTP_REQUEST_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(86_400_000)
      .default(3_600_000)
      .describe('a whole number of milliseconds from 0 (off) to 86400000'),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(72_000).describe('a whole number of milliseconds from 100 to 600000'),
    HTTP_BODY_MIN_BYTES_PER_SECOND: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .default(500)
      .describe('a whole number of bytes per second from 0 (off) to 1000000000'),
    HTTP_BODY_RATE_WINDOW_MS: z.coerce.number().int().min(100).max(600_000).default(20_000).describe('a whole number of milliseconds from 100 to 600000'),
    HTTP_RESPONSE_MIN_BYTES_PER_SECOND: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .default(1_024)
      .describe('a whole number of bytes per second from 0 (off) to 1000000000'),
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000).describe('a whole number of milliseconds from 0 to 600000'),
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .default(256)
      .describe('a whole number of connections from 0 (off) to 1000000'),
    AUTH_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1_000).describe('a whole number of milliseconds from 0 to 60000'),
    RUN_ENGINE: flag(true),
    ENGINE_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(500).describe('a whole number of milliseconds from 10 to 60000'),
    ENGINE_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4).describe('a whole number from 1 to 256'),
    ENGINE_LEASE_MS: z.coerce.number().int().min(500).max(3_600_000).default(30_000).describe('a whole number of milliseconds from 500 to 3600000'),
    ENGINE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5).describe('a whole number from 1 to 100'),
    ENGINE_IN_FLIGHT: z.coerce.number().int().min(0).max(1_000_000).default(20_000).describe('a whole number from 0 to 1000000'),
    ENGINE_RETRY_MS: z.coerce.number().int().min(0).max(600_000).default(2_000).describe('a whole number of milliseconds from 0 to 600000'),
    BACKEND_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(1_200_000).default(300_000).describe('a whole number of milliseconds from 100 to 1200000'),
    LOCAL_QUEUE_MS: z.coerce.number().int().min(0).max(600_000).default(1_000).describe('a whole number of milliseconds from 0 to 600000'),
    LOCAL_GENERATE_MS: z.coerce.number().int().min(0).max(600_000).default(3_000).describe('a whole number of milliseconds from 0 to 600000'),
    LOCAL_FAIL: z.enum(['none', '400', 'nsfw', '422', '500', '501', '503', '504', 'hang', 'throw', 'garbage']).default('none'),
    UPLOAD_MAX_IMAGE_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(30 * 1024 * 1024)
      .describe('a whole number of bytes from 1024 to 1073741824'),
    UPLOAD_MAX_MEDIA_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024 * 1024)
      .default(200 * 1024 * 1024)
      .describe('a whole number of bytes from 1024 to 17179869184'),
    UPLOAD_MAX_IMAGE_PIXELS: z.coerce.number().int().min(1).max(1_000_000_000).default(100_000_000).describe('a whole number of pixels from 1 to 1000000000'),
    UPLOAD_MAX_VIDEO_SIDE: z.coerce.number().int().min(16).max(65_536).default(4096).describe('a whole number of pixels from 16 to 65536'),
    UPLOAD_MAX_VIDEO_PIXELS: z.coerce
      .number()
      .int()
      .min(256)
      .max(1_000_000_000)
      .default(4096 * 2160)
      .describe('a whole number of pixels from 256 to 1000000000'),
    UPLOAD_MAX_VIDEO_FPS: z.coerce.number().int().min(1).max(1000).default(120).describe('a whole number of frames per second from 1 to 1000'),
    UPLOAD_MAX_VIDEO_FRAMES: z.coerce.number().int().min(1).max(10_000_000).default(3600).describe('a whole number of frames from 1 to 10000000'),
    FFMPEG_PATH: z.string().min(1).optional(),
    FFPROBE_PATH: z.string().min(1).optional(),
    MEDIA_THREADS: z.coerce.number().int().min(1).max(64).default(2).describe('a whole number from 1 to 64'),
    ALLOW_PRIVATE_NETWORK: flag(false),
    UPSTREAM_PRIVATE_HOSTS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean),
      )
      .refine(
        (list) => list.every((h) => /^(\[[0-9a-f:.]+\]|[0-9a-f:]+:[0-9a-f:.]*|[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?)$/.test(h)),
        'must be comma-separated host names or IP addresses without scheme or port, e.g. gpu-1.lan,10.0.0.5',
      )
      .describe('comma-separated host names or IP addresses, e.g. gpu-1.lan,10.0.0.5'),
    CALLBACK_RETRY_DELAYS_MS: z
      .string()
      .regex(/^\d+(,\d+)*$/, 'must be comma-separated whole numbers of milliseconds')
      .default('5000,30000,120000,600000,1800000,3600000,10800000')
      .describe('comma-separated whole numbers of milliseconds, e.g. 5000,30000'),
    CALLBACK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000).describe('a whole number of milliseconds from 100 to 60000'),
    CALLBACK_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64).describe('a whole number from 1 to 1024'),
    MODEL_SWITCH_CACHE_MS: z.coerce.number().int().min(0).max(600_000).default(2_000).describe('a whole number of milliseconds from 0 to 600000'),
    MODERATION_WORDS: z.string().default(''),
    MODERATION_WORDS_FILE: z.string().min(1).optional(),
    MODERATION_IMAGES: z.enum(['local', 'off']).default('local'),
    MODERATION_IMAGE_THRESHOLD: z.coerce.number().min(0).max(1).default(0.7).describe('a number from 0 to 1'),
    MODERATION_FAIL_OPEN: flag(false),
    MODERATION_FETCH_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(100 * 1024 * 1024)
      .default(30 * 1024 * 1024)
      .describe('a whole number of bytes from 1024 to 104857600'),
    MODERATION_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000).describe('a whole number of milliseconds from 100 to 120000'),
    MODERATION_WORKERS: z.coerce.number().int().min(1).max(64).default(1).describe('a whole number of worker threads from 1 to 64'),
    MODERATION_CHECKS_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(2).describe('a whole number of checks from 1 to 10000'),
    MODERATION_QUEUE_MAX: z.coerce.number().int().min(1).max(100_000).default(64).describe('a whole number of photos from 1 to 100000'),
    MODERATION_REJECT_COST: z.coerce.number().int().min(0).max(1_000_000).default(5).describe('a whole number of requests from 0 to 1000000'),
    ROLE: z.enum(['api', 'worker', 'all']).default('all'),
    S3_ENDPOINT: httpUrl.optional(),
    S3_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name: 3 to 63 lower-case letters, digits, dots and hyphens')
      .optional(),
    S3_REGION: z.string().min(1).default('us-east-1'),
    S3_ACCESS_KEY_ID: z.string().min(1).optional(),
    S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    S3_FORCE_PATH_STYLE: flag(false),
    S3_CHECKSUMS: z.enum(['WHEN_SUPPORTED', 'WHEN_REQUIRED']).optional(),
    S3_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9._-]+\/$/, 'must be letters, digits, dots, hyphens or underscores ending in /, e.g. gengate/')
      .optional(),
    FILE_LINKS: z.enum(['proxy', 'presigned']).default('proxy'),
    UPSTREAM_WEBHOOKS: flag(false),
    UPSTREAM_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(4_000).describe('a whole number of milliseconds from 10 to 600000'),
    UPSTREAM_FALLBACK_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(60_000).describe('a whole number of milliseconds from 10 to 600000'),
    ROUTE_BREAKER_FAILURES: z.coerce.number().int().min(1).max(1000).default(5).describe('a whole number from 1 to 1000'),
    SIGNUP: z.enum(['off', 'invite', 'open']).default('off'),
    CONSOLE_DIR: z.string().min(1).optional(),
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587')
      .optional(),
    MAIL_FROM: z.string().min(3).default('GenGate <gengate@localhost>'),
    OAUTH_ACCESS_TOKEN_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600).describe('a whole number of seconds from 60 to 86400'),
    OAUTH_REFRESH_TOKEN_DAYS: z.coerce.number().int().min(1).max(365).default(30).describe('a whole number of days from 1 to 365'),
    MCP_INLINE_MAX_BYTES: z.coerce.number().int().min(0).max(20_000_000).default(1_048_576).describe('a whole number of bytes from 0 to 20000000'),
    SESSION_TTL_HOURS: z.coerce.number().int().min(1).max(8760).default(168).describe('a whole number of hours from 1 to 8760'),
    SIGNIN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900).describe('a whole number of seconds from 1 to 86400'),
    PASSWORD_HASH_THREADS: z.coerce.number().int().min(1).max(16).default(1).describe('a whole number of threads from 1 to 16'),
    PASSWORD_HASH_QUEUE: z.coerce.number().int().min(0).max(10_000).default(64).describe('a whole number of waiting hashes from 0 to 10000'),
    SIGNIN_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(30).describe('a whole number of attempts from 1 to 1000000'),
    INVITE_LIMIT_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(20).describe('a whole number of invites from 1 to 1000000'),
    INVITE_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(20).describe('a whole number of invites from 1 to 1000000'),
    SIGNIN_LIMIT_PER_EMAIL: z.coerce.number().int().min(1).max(1_000_000).default(10).describe('a whole number of attempts from 1 to 1000000'),
    ROUTE_BREAKER_COOLDOWN_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000).describe('a whole number of milliseconds from 0 to 3600000'),
    ...tracingSettings,
  })
  .superRefine((c, ctx) => {
    // Settings that only make sense together: named here so the error says what is missing.
    const need = (ok: boolean, path: string, message: string) => ok || ctx.addIssue({ code: 'custom', path: [path], message });
    need(!c.S3_ENDPOINT || !!c.S3_BUCKET, 'S3_BUCKET', 'is required when S3_ENDPOINT is set (the bucket GenGate keeps files in)');
    need(
      !!c.S3_ACCESS_KEY_ID === !!c.S3_SECRET_ACCESS_KEY,
      c.S3_ACCESS_KEY_ID ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID',
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together',
    );
    need(c.FILE_LINKS !== 'presigned' || !!c.S3_BUCKET, 'FILE_LINKS', 'presigned links need the S3 store (set S3_BUCKET), or use proxy');
    need(
      c.HTTP_REQUEST_TIMEOUT_MS === 0 || c.HTTP_REQUEST_TIMEOUT_MS >= c.HTTP_HEADERS_TIMEOUT_MS,
      'HTTP_REQUEST_TIMEOUT_MS',
      'must be 0 (off) or at least HTTP_HEADERS_TIMEOUT_MS (the headers are part of the request)',
    );
    need(
      !c.STRIPE_SECRET_KEY || !!c.STRIPE_WEBHOOK_SECRET,
      'STRIPE_WEBHOOK_SECRET',
      'is required when STRIPE_SECRET_KEY is set (top-ups are credited only from signed webhook events)',
    );
    need(c.TOPUP_MIN <= c.TOPUP_MAX, 'TOPUP_MAX', `must be at least TOPUP_MIN (${c.TOPUP_MIN})`);
    need(
      c.TOPUP_PRESETS.split(',').every((p) => Number(p) >= c.TOPUP_MIN && Number(p) <= c.TOPUP_MAX),
      'TOPUP_PRESETS',
      `every preset must lie from TOPUP_MIN to TOPUP_MAX (${c.TOPUP_MIN} to ${c.TOPUP_MAX} USD)`,
    );
    need(
      c.ROLE !== 'worker' || c.RUN_ENGINE,
      'RUN_ENGINE',
      'cannot be false with ROLE=worker (a worker only runs the engine); use ROLE=api for an HTTP-only process',
    );
  });

/** Names of settings that may hold an upstream credential a catalog route names by `key_env` (never a known setting). */
export const CREDENTIAL_SETTING = /^[A-Z][A-Z0-9_]{0,62}_(KEY|TOKEN|SECRET)$/;

type RawConfig = z.infer<typeof configSchema>;

/** Parsed settings with derived values filled in. */
export interface Config extends RawConfig {
  DATA_DIR: string;
  DATABASE_URL: string;
  DATABASE_SLOW_TX_MS: number;
  DATABASE_GUARDS: boolean;
  PUBLIC_BASE_URL: string;
  PRICING_BASE_URL: string;
  TOPUP_URL: string;
  /** Credentials named by catalog routes (`key_env`): every setting matching CREDENTIAL_SETTING, read once here. */
  secrets: Readonly<Record<string, string>>;
}

const KNOWN = Object.keys(configSchema.shape);

/** Reads a JSON file named by the setting `setting`; a missing or malformed file is a ConfigError naming both. */
export function readJsonFile(file: string, setting: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${setting}: cannot read ${file} (${(e as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${setting}: ${file} is not valid JSON (${(e as Error).message})`);
  }
}

/** Reads an optional JSON config file (GENGATE_CONFIG); environment variables win over it. */
function readConfigFile(file: string): Record<string, unknown> {
  const parsed = readJsonFile(file, 'GENGATE_CONFIG');
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`GENGATE_CONFIG: ${file} must hold a JSON object of settings`);
  }
  for (const key of Object.keys(parsed)) {
    if (!KNOWN.includes(key) && !CREDENTIAL_SETTING.test(key)) {
      throw new ConfigError(`GENGATE_CONFIG: unknown setting ${key} in ${file}; known: ${KNOWN.join(', ')}`);
    }
  }
  return parsed as Record<string, unknown>;
}

/** Parses settings once from the environment (and GENGATE_CONFIG file); throws ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const fromFile = env.GENGATE_CONFIG ? readConfigFile(env.GENGATE_CONFIG) : {};
  const input: Record<string, unknown> = { ...fromFile };
  for (const key of KNOWN) {
    const v = env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  const result = configSchema.safeParse(input);
  if (!result.success) {
    const lines = result.error.issues.map((i) => {
      const name = i.path.join('.') || '(settings)';
      const field = configSchema.shape[name as keyof typeof configSchema.shape];
      const allowed = i.code !== 'custom' && field?.description ? `must be ${field.description}` : i.message;
      return `${name}: ${allowed} (${shownSetting(String(i.path[0]), input[String(i.path[0])])})`;
    });
    throw new ConfigError(`invalid settings:\n  ${lines.join('\n  ')}`);
  }
  const raw = result.data;
  const secrets: Record<string, string> = {};
  for (const [key, v] of [...Object.entries(fromFile), ...Object.entries(env)]) {
    if (CREDENTIAL_SETTING.test(key) && !KNOWN.includes(key) && typeof v === 'string' && v !== '') secrets[key] = v;
  }
  const dataDir = path.resolve(raw.DATA_DIR);
  const shownHost = raw.HOST === '0.0.0.0' || raw.HOST === '::' ? '127.0.0.1' : raw.HOST;
  const publicBase = raw.PUBLIC_BASE_URL ?? `http://${shownHost}:${raw.PORT}`;
  return {
    ...raw,
    DATA_DIR: dataDir,
    DATABASE_URL: raw.DATABASE_URL ?? `sqlite:${path.join(dataDir, 'gengate.db')}`,
    // A development and test aid (src/store/README.md): off in production unless asked for.
    DATABASE_SLOW_TX_MS: raw.DATABASE_SLOW_TX_MS ?? (env.NODE_ENV === 'production' ? 0 : 50),
    // The store's guard rails (decision 0017) cost writes about a fifth of their CPU: on wherever tests run.
    DATABASE_GUARDS: raw.DATABASE_GUARDS ?? env.NODE_ENV !== 'production',
    PUBLIC_BASE_URL: publicBase,
    PRICING_BASE_URL: raw.PRICING_BASE_URL ?? publicBase,
    TOPUP_URL: raw.TOPUP_URL ?? `${publicBase}/topup`,
    secrets,
  };
}
