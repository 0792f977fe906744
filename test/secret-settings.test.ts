import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

/** Issue 39 finding 9: a start-up error names each wrong secret setting and what it must be, never its value. */
describe('start-up errors never print secret settings', () => {
  const secrets = {
    STRIPE_SECRET_KEY: 'sk_live_51Habc-DEFsecretvalue!',
    STRIPE_WEBHOOK_SECRET: 'whsec_abcdefsecret value',
    SMTP_URL: 'smpt://mailer:hunter2hunter2@mail.example.com:587',
    ADMIN_TOKEN: 'adm1nsecret',
    METRICS_TOKEN: 'metr1csecret',
    GENGATE_SECRET_KEY: 'shortsecretkeyvalue',
    REDIS_URL: 'redis//:redispassw0rd@cache:6379',
    DATABASE_URL: 'mysql://dbuser:dbpassw0rd@db/gengate',
  };

  function message(env: Record<string, string>): string {
    try {
      loadConfig(env);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('the settings were accepted');
  }

  it('malformed: every setting is named with what it must be; no value, and no part of a password, is shown', () => {
    const msg = message(secrets);
    for (const name of Object.keys(secrets)) expect(msg).toMatch(new RegExp(`^  ${name}: `, 'm'));
    for (const value of Object.values(secrets)) expect(msg).not.toContain(value);
    for (const part of ['secretvalue', 'secret value', 'hunter2', 'adm1nsecret', 'metr1csecret', 'shortsecretkeyvalue', 'redispassw0rd', 'dbpassw0rd']) {
      expect(msg).not.toContain(part);
    }
    expect(msg).toContain('STRIPE_SECRET_KEY: must be a Stripe secret or restricted key');
    expect(msg).toMatch(/ADMIN_TOKEN: must be at least 16 characters \(got a value of 11 characters, not shown\)/);
    // A URL's scheme and host still help find the mistake.
    expect(msg).toContain('"smpt://[hidden]@mail.example.com:587"');
  });

  it('a setting that is not secret is still shown as given', () => {
    expect(message({ PORT: 'eighty' })).toContain('PORT: must be a whole number from 0 to 65535 (got "eighty")');
  });
});
