import type { Config } from '../config.js';
import { buildServices } from '../services.js';
import { buildApp } from '../http/app.js';
import { firstRun } from './first-run.js';

/**
 * `gengate serve`: migrations, first-run account, HTTP; stops cleanly on SIGINT/SIGTERM. ROLE
 * (or --role) splits the work (docs/scaling.md): api serves the API and holds no task state;
 * worker runs the engine, callbacks and expiry sweep, with only /healthz, /readyz and /metrics on
 * its port; all does both. RUN_ENGINE=false turns all into api.
 */
export async function serve(config: Config): Promise<void> {
  const services = await buildServices(config);
  const api = config.ROLE !== 'worker';
  const work = config.ROLE !== 'api' && config.RUN_ENGINE;
  if (api && config.FIRST_RUN_ACCOUNT) await firstRun(services, (line) => process.stdout.write(`${line}\n`));
  const app = buildApp(services, { routes: api ? 'all' : 'ops' });
  await app.listen({ port: config.PORT, host: config.HOST });
  if (work) services.engine.start(app.log);
  if (work) services.callbacks.start(app.log);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const role = api && work ? 'all' : api ? 'api' : 'worker';
  process.stdout.write(
    `GenGate ${role === 'worker' ? 'worker (health and metrics only) ' : ''}listening on http://${config.HOST}:${port} ` +
      `(role: ${role}, database: ${services.database.dialect}, files: ${config.S3_BUCKET ? `s3 ${config.S3_BUCKET}` : 'disk'}, wake-ups: ${services.wakeups.kind}, data: ${config.DATA_DIR})\n`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping');
    await app.close();
    await services.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
