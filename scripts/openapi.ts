// Writes the OpenAPI document the service serves to a file (default sdk/openapi.json): the SDK's
// types and the OpenAPI linters are made from it. Builds the app over a throwaway SQLite database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const out = path.resolve(process.argv[2] ?? 'sdk/openapi.json');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-openapi-'));
try {
  const config = loadConfig({
    DATABASE_URL: path.join(dir, 'openapi.sqlite'),
    LOG_LEVEL: 'silent',
    // The admin operations are part of the document only when the admin API is on.
    ADMIN_TOKEN: 'openapi-document-only-0123456789',
    WEBHOOK_DISPATCHER: 'false',
  });
  const app = await buildApp({ config });
  const doc = app.swagger();
  await app.close();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
