import type { Config } from '../config.js';
import { buildServices } from '../services.js';
import { buildApp } from '../http/app.js';
import { firstRun } from './first-run.js';

/** `gengate serve`: migrations, first-run account, HTTP; stops cleanly on SIGINT/SIGTERM. */
export async function serve(config: Config): Promise<void> {
  const services = await buildServices(config);
  if (config.FIRST_RUN_ACCOUNT) await firstRun(services, (line) => process.stdout.write(`${line}\n`));
  const app = buildApp(services);
  await app.listen({ port: config.PORT, host: config.HOST });
  if (config.RUN_ENGINE) services.engine.start(app.log);
  if (config.RUN_ENGINE) services.callbacks.start(app.log);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  process.stdout.write(`GenGate listening on http://${config.HOST}:${port} (database: ${services.database.dialect}, data: ${config.DATA_DIR})\n`);
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
