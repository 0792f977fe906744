import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { CREDENTIAL_SETTING, configSchema, loadConfig } from '../../src/config.js';
import { startServer } from '../helpers/server.js';

/**
 * The container image and the manifests (deploy/, Dockerfile; decision 2600), checked without a
 * container engine: every setting they give a GenGate process is one src/config.ts knows, and the
 * settings each process gets parse (with sample values where the files interpolate secrets);
 * `docker compose config` (or Debian's docker-compose) validates the compose files when installed.
 */
const run = promisify(execFile);
const KNOWN = new Set(Object.keys(configSchema.shape));
/** Stand-ins for what deploy/.env and the Secret hold: long enough for every minimum. */
const SAMPLE = (name: string) =>
  name === 'DATABASE_URL'
    ? 'postgres://gengate:pw@postgres:5432/gengate'
    : name === 'REDIS_URL'
      ? 'redis://redis:6379'
      : `sample-${name.toLowerCase()}-0123456789abcdef0123456789abcdef`;
const ENV_FILE = Object.fromEntries(
  readFileSync('deploy/env.example', 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1) || SAMPLE(l.slice(0, l.indexOf('=')))]),
);

/** Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?message}` with the sample .env. */
function interpolate(value: string): string {
  return value.replace(
    /\$\{([A-Z_]+)(?::?([-?])([^}]*))?\}/g,
    (_m, name: string, op?: string, rest?: string) => ENV_FILE[name] ?? (op === '-' ? rest! : SAMPLE(name)),
  );
}

/** The settings each GenGate service of a compose file gets (services built from this repository or its image). */
function composeProcesses(file: string): Record<string, Record<string, string>> {
  const doc = parse(readFileSync(file, 'utf8'), { merge: true }) as {
    services: Record<string, { build?: unknown; image?: string; environment?: Record<string, unknown> }>;
  };
  const out: Record<string, Record<string, string>> = {};
  for (const [name, svc] of Object.entries(doc.services)) {
    if (!svc.build && !svc.image?.startsWith('gengate')) continue;
    out[name] = Object.fromEntries(Object.entries(svc.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
  }
  return out;
}

/** The Dockerfile's ENV settings. */
function dockerfileEnv(): Record<string, string> {
  const text = readFileSync('Dockerfile', 'utf8').replace(/\\\n/g, ' ');
  const env: Record<string, string> = {};
  for (const line of text.split('\n').filter((l) => l.startsWith('ENV '))) for (const m of line.slice(4).matchAll(/([A-Z_]+)=(\S+)/g)) env[m[1]!] = m[2]!;
  return env;
}

const unknown = (env: Record<string, string>) => Object.keys(env).filter((k) => !KNOWN.has(k) && !CREDENTIAL_SETTING.test(k) && k !== 'NODE_ENV');

describe('the container image and the manifests', () => {
  it('the Dockerfile pins a Node LTS release, builds in two stages and runs as a non-root user with a health check', () => {
    const text = readFileSync('Dockerfile', 'utf8');
    const version = /^ARG NODE_VERSION=(\d+)\.(\d+)\.(\d+)$/m.exec(text);
    expect(version, 'NODE_VERSION pinned to x.y.z').not.toBeNull();
    expect([24, 26]).toContain(Number(version![1])); // even-numbered lines are the LTS ones
    expect(text.match(/^FROM node:\$\{NODE_VERSION\}-/gm)).toHaveLength(2);
    expect(text).toMatch(/npm prune --omit=dev/);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
    expect(text).toMatch(/COPY --from=build \/app\/dist \.\/dist/); // the console is built into dist/console
    expect(text).toMatch(/COPY --from=build \/app\/catalog \.\/catalog/); // the built-in model definitions, read at start
    expect(unknown(dockerfileEnv())).toEqual([]);
    expect(() => loadConfig(dockerfileEnv())).not.toThrow();
    expect(readFileSync('.dockerignore', 'utf8')).toMatch(/^node_modules$/m);
  });

  for (const file of ['deploy/compose.yml', 'deploy/compose.sqlite.yml']) {
    it(`${file}: every setting is one GenGate knows, and each process's settings parse`, () => {
      const processes = composeProcesses(file);
      expect(Object.keys(processes).length).toBeGreaterThan(0);
      for (const [name, env] of Object.entries(processes)) {
        expect(unknown(env), `${file} ${name}`).toEqual([]);
        expect(() => loadConfig(env), `${file} ${name}`).not.toThrow();
      }
    });
  }

  it('deploy/compose.yml is the scale-out topology: PostgreSQL, Redis, MinIO, two API processes, a worker, a proxy', () => {
    const processes = composeProcesses('deploy/compose.yml');
    const roles = Object.entries(processes).map(([name, env]) => [name, loadConfig(env)] as const);
    expect(roles.filter(([, c]) => c.ROLE === 'api')).toHaveLength(2);
    expect(roles.filter(([, c]) => c.ROLE === 'worker')).toHaveLength(1);
    for (const [, c] of roles) {
      expect(c.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(c.REDIS_URL).toBe('redis://redis:6379');
      expect(c.S3_ENDPOINT).toBe('http://minio:9000');
    }
    const doc = parse(readFileSync('deploy/compose.yml', 'utf8'), { merge: true }) as { services: Record<string, { image?: string }> };
    expect(Object.values(doc.services).map((s) => s.image?.split(':')[0])).toEqual(expect.arrayContaining(['postgres', 'redis', 'minio/minio', 'nginx']));
    // Secrets come from deploy/.env, which git ignores.
    expect(readFileSync('.gitignore', 'utf8')).toMatch(/^deploy\/\.env$/m);
  });

  it('the Kubernetes manifests: API and worker Deployments with probes on /healthz and /readyz, PodDisruptionBudgets, secrets by reference', () => {
    const docs = readdirSync('deploy/kubernetes')
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => parseAllDocuments(readFileSync(path.join('deploy/kubernetes', f), 'utf8')).map((d) => d.toJSON() as any));
    const configMap = docs.find((d) => d.kind === 'ConfigMap');
    const deployments = docs.filter((d) => d.kind === 'Deployment');
    expect(deployments.map((d) => d.spec.template.spec.containers[0].args.at(-1)).sort()).toEqual(['api', 'worker']);
    expect(docs.filter((d) => d.kind === 'PodDisruptionBudget')).toHaveLength(2);
    expect(docs.some((d) => d.kind === 'Secret')).toBe(false); // by reference only
    for (const d of deployments) {
      const [c] = d.spec.template.spec.containers;
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'gengate' } }, { secretRef: { name: 'gengate' } }]);
      expect(c.resources.requests.cpu).toBeDefined();
      expect(c.resources.requests.memory).toBeDefined();
      const env = { ...configMap.data, ...Object.fromEntries((c.env ?? []).map((e: { name: string; value: string }) => [e.name, e.value])) };
      expect(unknown(env)).toEqual([]);
      // The Secret's names (README.md here) with sample values: everything parses together.
      const secret = Object.fromEntries(
        ['DATABASE_URL', 'REDIS_URL', 'GENGATE_SECRET_KEY', 'ADMIN_TOKEN', 'METRICS_TOKEN', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'].map((k) => [
          k,
          SAMPLE(k),
        ]),
      );
      const config = loadConfig({ ...env, ...secret });
      // The stop fits in the pod's grace period: SHUTDOWN_GRACE_MS plus the preStop pause, with room.
      const pause = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
      expect(config.SHUTDOWN_GRACE_MS / 1000 + pause).toBeLessThan(d.spec.template.spec.terminationGracePeriodSeconds);
    }
    const secretNames = readFileSync('deploy/kubernetes/README.md', 'utf8').matchAll(/--from-literal=([A-Z_]+)=/g);
    expect(unknown(Object.fromEntries([...secretNames].map((m) => [m[1]!, 'x'])))).toEqual([]);
  }, 240_000);

  it('the alert rules and the Grafana dashboard use only metrics GenGate exports', async () => {
    const rules = parse(readFileSync('deploy/monitoring/alerts.yml', 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
    const dashboard = JSON.parse(readFileSync('deploy/monitoring/grafana-dashboard.json', 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const exprs = [...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)), ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))];
    expect(rules.groups[0]!.rules.length).toBeGreaterThan(10);
    const s = await startServer('sqlite');
    try {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const exported = new Set(
        [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap((m) => (m[2] === 'histogram' ? ['_bucket', '_count', '_sum'].map((x) => m[1]! + x) : [m[1]!])),
      );
      const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:gengate|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!)));
      expect(used.size).toBeGreaterThan(15);
      expect([...used].filter((name) => !exported.has(name))).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('docker compose config accepts both compose files', async () => {
    const cli = await findCompose();
    if (!cli) {
      process.stderr.write(
        '\n*** NOTICE: neither `docker compose` nor `docker-compose` is installed: the compose files were only checked by parsing (apt-get install docker-compose) ***\n\n',
      );
      return;
    }
    for (const file of ['deploy/compose.yml', 'deploy/compose.sqlite.yml']) {
      const { stdout } = await run(cli[0]!, [...cli.slice(1), '-f', file, 'config'], { env: { ...process.env, ...ENV_FILE } });
      expect(stdout).toMatch(/services:/);
    }
  });
});

/** `docker compose` (the plugin) or Debian's `docker-compose`, whichever runs. */
async function findCompose(): Promise<string[] | null> {
  for (const cli of [['docker', 'compose'], ['docker-compose']]) {
    const ok = await run(cli[0]!, [...cli.slice(1), 'version']).then(
      () => true,
      () => false,
    );
    if (ok) return cli;
  }
  return null;
}
