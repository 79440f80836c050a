/**
 * `npx tsx bench/export-rss.ts [--rows 1000000] [--slow]`
 *
 * The CSV export in constant memory: fills a fresh SQLite database with one page of `rows`
 * sessions, starts the built service as `npm start` runs it, downloads the page's sessions with
 * `Accept: text/csv` (with `--slow`, a client that reads in small sips, so back-pressure must hold
 * the server back), and samples the service's resident set all along. Fails unless every row
 * arrives and the peak stays within the 250 MB budget.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey, createTenant } from '../src/admin/repository.js';
import { createAudience } from '../src/audiences/repository.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { newId } from '../src/ids.js';
import { createPage, findPage } from '../src/pages/repository.js';
import { NOT_COLLECTED } from '../src/visits/repository.js';
import { startOptions } from './processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUDGET = 250 * 1024 * 1024;
const argv = process.argv.slice(2);
const rowsArg = argv.indexOf('--rows');
const ROWS = rowsArg === -1 ? 1_000_000 : Number(argv[rowsArg + 1]);
const SLOW = argv.includes('--slow');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-export-'));
const url = path.join(dir, 'export.sqlite');

async function fill(): Promise<{ key: string; pageId: string }> {
  const db = openDatabase(loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' }).database);
  await migrateToLatest(db);
  const made = await db.kysely.transaction().execute(async (trx) => {
    const tenant = await createTenant(trx, 'Export Inc', 'pages.localhost');
    const key = (await createApiKey(trx, tenant.tenantId)).apiKey;
    const page = await createPage(
      trx,
      tenant.tenantId,
      {
        name: 'Export',
        title: 'Export, "big"',
        pageContext: 'ctx',
        pageType: 'inbound',
      },
      // No image is named: no address is made.
      (hostname) => `http://${hostname}`,
      // No template is named: none is looked up.
      async () => undefined,
    );
    const row = await findPage(trx, tenant.tenantId, page.pageId);
    if (!row) throw new Error('no page');
    const audience = await createAudience(trx, row, {}, (hostname) => `http://${hostname}`);
    return { key, tenantId: tenant.tenantId, pageId: page.pageId, audienceId: audience.audienceId };
  });
  const base = Date.UTC(2026, 0, 1);
  for (let i = 0; i < ROWS; i += 20_000) {
    await db.kysely.transaction().execute(async (trx) => {
      for (let j = i; j < Math.min(ROWS, i + 20_000); j += 500) {
        const rows = Array.from({ length: Math.min(500, ROWS - j) }, (_, k) => {
          const n = j + k;
          const at = new Date(base + n * 1000).toISOString();
          return {
            id: newId('session'),
            tenant_id: made.tenantId,
            page_id: made.pageId,
            audience_id: made.audienceId,
            analytics_session_id: `ga-${n}`,
            page_title: 'Export, "big"',
            page_url: 'https://export.pages.localhost/x?a=1,b=2',
            session_started_at: at,
            session_ended_at: at,
            time_spent_seconds: n % 300,
            max_scroll_depth_percentage: n % 100,
            total_clicks_count: n % 7,
            questions_asked_count: 0,
            is_bounce: n % 2,
            has_form_submit: 0,
            has_conversion: 0,
            form_submission_id: '',
            form_submission_identifier: '',
            form_submission_email: '',
            form_submission_phone: '',
            utm_campaign: n % 5 === 0 ? '=cmd' : 'spring',
            utm_content: '',
            utm_medium: 'email',
            utm_source: 'news',
            utm_term: '',
            visit_id: null,
            created_at: at,
            ...NOT_COLLECTED,
          };
        });
        await trx.insertInto('audience_sessions').values(rows).execute();
      }
    });
  }
  await db.close();
  return made;
}

async function main() {
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const started = Date.now();
  const { key, pageId } = await fill();
  console.log(`# ${ROWS} sessions written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const start = startOptions();
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const service = spawn(process.execPath, [...start.args, 'dist/server.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...start.env,
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN: '',
      BOOTSTRAP_API_KEY: '',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (i > 300) throw new Error('the service did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    let peak = 0;
    const sample = setInterval(() => {
      const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${service.pid}/status`, 'utf8'))?.[1];
      peak = Math.max(peak, Number(kb ?? 0) * 1024);
    }, 50);
    const t0 = Date.now();
    const { lines, bytes } = await new Promise<{ lines: number; bytes: number }>((resolve, reject) => {
      http
        .get(
          { host: '127.0.0.1', port, path: `/v0/pages/${pageId}/audience_sessions`, headers: { 'x-api-key': key, accept: 'text/csv' } },
          (res) => {
            if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode}`));
            let lines = 0;
            let bytes = 0;
            res.on('data', (chunk: Buffer) => {
              bytes += chunk.length;
              for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
              if (SLOW) {
                res.pause();
                setTimeout(() => res.resume(), 1);
              }
            });
            res.on('end', () => resolve({ lines, bytes }));
            res.on('error', reject);
          },
        )
        .on('error', reject);
    });
    clearInterval(sample);
    const seconds = (Date.now() - t0) / 1000;
    console.log(
      `# exported ${lines - 1} rows, ${(bytes / 1024 / 1024).toFixed(0)} MB in ${seconds.toFixed(1)} s; service peak RSS ${(peak / 1024 / 1024).toFixed(0)} MB (budget 250 MB)`,
    );
    if (lines - 1 !== ROWS) throw new Error(`expected ${ROWS} rows`);
    if (peak > BUDGET) throw new Error('over the memory budget');
  } finally {
    service.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
