import { bootstrap } from './admin/bootstrap.js';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`Invalid configuration: ${err.message}\n`);
  process.exit(1);
}

const app = await buildApp({ config });

const created = await bootstrap(app.db, config.bootstrapApiKey, config.fallbackDomainSuffix);
if (created) {
  process.stdout.write(
    `Created tenant "default" (${created.tenantId}). Its API key, shown only this once:\n` +
      `API key: ${created.apiKey}\n` +
      `Use it as: curl -H 'x-api-key: ${created.apiKey}' http://${config.host}:${config.port}/v0/accounts/search\n`,
  );
}

// Drain in-flight requests, then close the database; a second signal, or a stuck drain, forces the exit.
let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) process.exit(1);
    closing = true;
    app.log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), 10_000).unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}

await app.listen({ port: config.port, host: config.host });
