import { bootstrap } from './admin/index.js';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { holdRequests } from './http/hold.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`Invalid configuration: ${err.message}\n`);
  process.exit(1);
}

const app = await buildApp({ config });

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

// The port first, the first tenant after: a start that cannot listen creates nothing, so the key
// a fresh install prints once is printed by a start that serves it, never by one that then dies.
const release = holdRequests(app.server);
const where = `${config.host}:${config.port}`;
try {
  await app.listen({ port: config.port, host: config.host });
} catch (err) {
  process.stderr.write(
    `Cannot listen on ${where}: ${listenFailure(err)}. Nothing was created; the next start that listens prints the API key.\n`,
  );
  await app.close().catch(() => {});
  process.exit(1);
}

let created: Awaited<ReturnType<typeof bootstrap>>;
try {
  created = await bootstrap(app.db, config.bootstrapApiKey, config.fallbackDomainSuffix);
} catch (err) {
  // Not app.close(): it would wait for the held requests. The database keeps what it committed.
  app.log.error({ err }, 'bootstrap failed');
  process.exit(1);
}
// The one line every start prints, whatever LOG_LEVEL says: where it listens (the port it really got,
// so PORT=0 works) and where a person opens the console. Tests wait for it to know the port is theirs.
const bound = app.server.address();
const listening =
  typeof bound === 'object' && bound ? `${config.host.includes(':') ? `[${config.host}]` : config.host}:${bound.port}` : where;
process.stdout.write(`Listening on http://${listening}; the console is at ${config.publicBaseUrl}/console/\n`);
if (created) {
  process.stdout.write(
    `Created tenant "default" (${created.tenantId}). Its API key, shown only this once:\n` +
      `API key: ${created.apiKey}\n` +
      `Use it as: curl -H 'x-api-key: ${created.apiKey}' http://${where}/v0/accounts/search\n`,
  );
}
release();

function listenFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return 'the port is taken by another process (EADDRINUSE); stop it or set PORT';
  if (code === 'EACCES') return 'not allowed to use this port (EACCES); set PORT above 1023 or grant the right';
  if (code === 'EADDRNOTAVAIL') return 'no such address on this machine (EADDRNOTAVAIL); check HOST';
  return err instanceof Error ? err.message : String(err);
}
