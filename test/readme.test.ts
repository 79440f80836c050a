import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import MarkdownIt from 'markdown-it';
import { parse, type ParseEntry } from 'shell-quote';
import { makeImage } from './fixtures.js';
import { freshDatabase, type Json, type TestDatabase } from './helpers.js';
import { startServer, type ServerProcess } from './server-process.js';

// Every command of the shell blocks of the README and of docs/guide.md (the curl walkthrough,
// moved there from the README in issue 37), run as written against a real listening server
// (issue 26), the README's first, then the guide's in the order it gives them: no example may
// answer 4xx or 5xx unless the table below says it is meant to. Commands are split into words by shell-quote and mapped
// explicitly (curl, `jq … | curl`, `open`, the admin CLI); nothing is handed to a shell. curl
// runs as installed, with the documents' own arguments, its connections sent to the test server.
// Ids the documents abbreviate (`person_01...`) become the real ids that earlier examples made.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The documents whose shell commands run, in this order. */
const DOCUMENTS = ['README.md', 'docs/guide.md'] as const;
type Document = (typeof DOCUMENTS)[number];
const TEXT = Object.fromEntries(DOCUMENTS.map((d) => [d, fs.readFileSync(path.join(ROOT, d), 'utf8')])) as Record<Document, string>;
const KEY = 'readme-test-key-0123456789abcdef';
const ADMIN_TOKEN = 'readme-test-admin-token-0123456789';

/** What the documents show but this test does not run, why, and where: each must still be there. */
const NOT_RUN: Record<string, { in: Document; why: string }> = {
  'npm ci && npm start': {
    in: 'README.md',
    why: 'installs and starts the service: what this test runs against (npm start: test/build-if-changed.test.ts)',
  },
  'npm run dev': { in: 'README.md', why: 'the development server, the same src/server.ts this test starts' },
  'npm test': { in: 'README.md', why: 'the suite this test is part of' },
  'npm run build': { in: 'README.md', why: 'the build npm start runs (test/build-if-changed.test.ts)' },
  'npm pack -w sdk --pack-destination ..': {
    in: 'README.md',
    why: 'packs the SDK for another project; test/docs.test.ts checks the name of the tarball it writes',
  },
  'npm run -s admin -- migrate': { in: 'docs/guide.md', why: 'the server migrated the database when it started' },
};
/** The README's two commands stay on its first screen: this many lines. */
const FIRST_SCREEN = 30;
/** Commands that are meant to fail, by what they start with, with the status the guide promises. */
const EXPECTED_FAILURES: [RegExp, number][] = [
  // No TXT record can be published for go.acme.com here: the guide says so beside it.
  [/\/v0\/tenant_domains\/domain_[0-9a-z]+\/verify$/, 409],
];
/**
 * Ids the guide uses before any of its examples makes one (the admin CLI erases a person before
 * the persons examples; a page's image names an asset before the assets examples): the test
 * makes them through the API first. Any other kind used too early fails.
 */
const SEEDS: Record<string, (api: (method: string, url: string, body: unknown, type?: string) => Promise<Json>) => Promise<string>> = {
  person: async (api) => (await api('POST', '/v0/persons', { name: 'Seeded for the README' })).personId,
  asset: async (api) => {
    const file = await api('POST', '/v0/files', await makeImage('png'), 'image/png');
    return (await api('POST', '/v0/assets', { assetType: 'image', name: 'Seeded', fileId: file.fileId })).assetId;
  },
};
/** The two lines that set up the shell (in the guide), exactly as the harness provides them. */
const SETUP = ['export KEY=pak_...', `H=(-H "x-api-key: $KEY" -H 'content-type: application/json')`];

interface Command {
  text: string;
  document: Document;
  section: string;
  /** The line of the document where its block starts (0-based). */
  line: number;
}

/** A document's shell commands in order: one per line, an indented or `\`-continued line joining the one above. */
function commandsOf(document: Document): Command[] {
  const tokens = new MarkdownIt().parse(TEXT[document], {});
  const commands: Command[] = [];
  let section = '';
  for (const [i, token] of tokens.entries()) {
    if (token.type === 'heading_open' && token.tag === 'h2') section = tokens[i + 1]?.content ?? '';
    if (token.type !== 'fence' || token.info.trim() !== 'sh') continue;
    const lines = token.content.replace(/\\\n/g, ' ').split('\n');
    for (const line of lines) {
      if (line.trim() === '') continue;
      const last = commands.at(-1);
      if (/^\s/.test(line) && last) last.text += `\n${line}`;
      else commands.push({ text: line, document, section, line: token.map?.[0] ?? 0 });
    }
  }
  return commands;
}

/** Every command this test knows of: the README's, then the guide's. */
const allCommands = (): Command[] => DOCUMENTS.flatMap(commandsOf);
const bare = (c: Command) => c.text.replace(/\s+#.*$/, '').trim();

let server: ServerProcess;
let database: TestDatabase;
let dir: string;
let port: string;
const ids = new Map<string, string>();
const seeds = new Map<string, string>();

before(async () => {
  database = await freshDatabase();
  server = await startServer({
    DATABASE_URL: database.url,
    BOOTSTRAP_API_KEY: KEY,
    ADMIN_TOKEN,
    WEBHOOK_DISPATCHER: 'false',
    AGENT: 'false',
  });
  port = new URL(server.url).port;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-readme-'));
  fs.writeFileSync(path.join(dir, 'logo.png'), await makeImage('png'));
  const api = async (method: string, url: string, body: unknown, type = 'application/json') => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: { 'x-api-key': KEY, 'content-type': type },
      body: Buffer.isBuffer(body) ? body : JSON.stringify(body),
    });
    assert.ok(res.ok, `${method} ${url}: ${res.status} ${await res.clone().text()}`);
    return (await res.json()) as Json;
  };
  for (const [kind, seed] of Object.entries(SEEDS)) seeds.set(kind, await seed(api));
});
after(async () => {
  await server?.kill();
  await database?.drop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const H = '\u0000H';
/** The words of a command, `$KEY` and `$ADMIN_TOKEN` expanded, `"${H[@]}"` spread, placeholders replaced. */
function words(text: string): ParseEntry[] {
  const env = (name: string) => {
    if (name === 'KEY') return KEY;
    if (name === 'ADMIN_TOKEN') return ADMIN_TOKEN;
    if (name === 'H[@]') return H;
    throw new Error(`a document uses $${name}, which this test does not know`);
  };
  return parse(text, env).flatMap((w): ParseEntry[] => {
    if (w === H) return ['-H', `x-api-key: ${KEY}`, '-H', 'content-type: application/json'];
    if (typeof w !== 'string') return 'comment' in w ? [] : [w];
    return [
      w.replace(/\b([a-z]+)_01\.\.\./g, (_, kind: string) => {
        const id = ids.get(kind) ?? seeds.get(kind);
        if (id === undefined) throw new Error(`${kind}_01... is used before any example made one: ${text}`);
        return id;
      }),
    ];
  });
}

/**
 * Remembers the ids an answer names. The answer's own id (its field named after the id's kind:
 * `pageLinkId` for `pagelink_...`, or else one whose name ends so, as `tenantDomainId` for
 * `domain_...`) replaces an older one of its kind; any other id counts only if none of its kind is
 * known yet (the first item of a list, a key inside an admin answer).
 */
function remember(body: Json): void {
  const kindOf = (value: unknown) => (typeof value === 'string' ? /^([a-z]+)_[0-9a-z]{26}$/.exec(value)?.[1] : undefined);
  const walk = (value: unknown): void => {
    const kind = kindOf(value);
    if (kind !== undefined && !ids.has(kind)) ids.set(kind, value as string);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const fields = Object.entries(body as Record<string, unknown>).flatMap(([field, value]) => {
      const kind = kindOf(value);
      const name = field.toLowerCase();
      if (kind === undefined || !name.endsWith('id')) return [];
      const named = name.slice(0, -2);
      return named === kind
        ? [{ kind, value: value as string, exact: true }]
        : named.endsWith(kind)
          ? [{ kind, value: value as string, exact: false }]
          : [];
    });
    const exact = fields.filter((f) => f.exact);
    for (const f of exact.length > 0 ? exact : fields) ids.set(f.kind, f.value);
  }
  walk(body);
}

interface Outcome {
  status: number;
  body: string;
}

/** curl with the document's arguments, its connection sent to the test server; the status from --write-out. */
function curl(args: string[], input?: string): Outcome {
  const run = spawnSync(
    'curl',
    ['-sS', '--connect-to', `::127.0.0.1:${port}`, '--write-out', '%{stderr}%{http_code}', '--max-time', '20', ...args],
    { cwd: dir, input, encoding: 'utf8' },
  );
  assert.equal(run.status, 0, `curl failed: ${run.stderr}`);
  return { status: Number(run.stderr.trim().split('\n').at(-1)), body: run.stdout };
}

function admin(args: string[]): Outcome {
  const run = spawnSync('npm', ['run', '-s', 'admin', '--', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  return { status: run.status === 0 ? 200 : 500, body: run.stdout || run.stderr };
}

/** Runs one command by its explicit mapping; returns what it answered, or undefined for the setup lines. */
function run(command: Command): Outcome | undefined {
  const text = command.text.replace(/\s+#.*$/, '').trim();
  if (SETUP.includes(text)) return undefined;
  const w = words(command.text);
  const pipe = w.findIndex((x) => typeof x === 'object' && 'op' in x && x.op === '|');
  const redirect = w.findIndex((x) => typeof x === 'object' && 'op' in x && x.op === '>');
  const plain = (list: ParseEntry[]) =>
    list.map((x) => {
      if (typeof x !== 'string') throw new Error(`an operator this test does not map: ${command.text}`);
      return x;
    });
  if (w[0] === 'jq' && pipe > 0) {
    const jq = spawnSync('jq', plain(w.slice(1, pipe)), { cwd: dir, encoding: 'utf8' });
    assert.equal(jq.status, 0, `jq failed: ${jq.stderr}`);
    const rest = plain(w.slice(pipe + 1));
    assert.equal(rest[0], 'curl', command.text);
    return curl(rest.slice(1), jq.stdout);
  }
  if (w[0] === 'curl' && redirect > 0) {
    const outcome = curl(plain(w.slice(1, redirect)));
    fs.writeFileSync(path.join(dir, plain(w.slice(redirect + 1))[0]!), outcome.body);
    return outcome;
  }
  if (w[0] === 'curl') return curl(plain(w.slice(1)));
  // A visitor's browser: a plain GET, as a person's browser would send it.
  if (w[0] === 'open') return curl(['-A', 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', ...plain(w.slice(1))]);
  const args = plain(w);
  if (args.slice(0, 5).join(' ') === 'npm run -s admin --') return admin(args.slice(5));
  throw new Error(`a ${command.document} command this test does not map: ${command.text}`);
}

test('the README and the guide have a shell example for what they promise, and every one is mapped', () => {
  const commands = allCommands();
  for (const [skipped, { in: document }] of Object.entries(NOT_RUN)) {
    assert.ok(
      commands.some((c) => c.document === document && bare(c) === skipped),
      `still in ${document}: ${skipped}`,
    );
  }
  for (const first of ['npm ci && npm start', 'npm test']) {
    const at = commands.find((c) => c.document === 'README.md' && bare(c) === first);
    assert.ok(at && at.line < FIRST_SCREEN, `the README shows ${first} on its first screen`);
  }
  const guide = commands.filter((c) => c.document === 'docs/guide.md').map(bare);
  for (const line of SETUP) assert.ok(guide.includes(line), `the guide sets up the shell with: ${line}`);
  assert.ok(guide.filter((t) => t.startsWith('curl ')).length >= 80, 'the curl examples are found');
});

test('every command of the README and the guide answers as they say, in order', { timeout: 300_000 }, () => {
  const failures: string[] = [];
  let ran = 0;
  for (const command of allCommands()) {
    if (NOT_RUN[bare(command)]?.in === command.document) continue;
    let outcome: Outcome | undefined;
    try {
      outcome = run(command);
    } catch (err) {
      failures.push(`${command.document}: ${command.text}\n  → ${(err as Error).message}`);
      continue;
    }
    if (outcome === undefined) continue;
    ran++;
    let body: Json;
    try {
      body = JSON.parse(outcome.body);
    } catch {
      body = undefined;
    }
    if (outcome.status < 400) remember(body);
    const words = command.text.split(/\s+/).map((w) => w.replace(/^["']|["']$/g, ''));
    const expected = EXPECTED_FAILURES.find(([pattern]) => words.some((x) => pattern.test(x.replace(/_01\.\.\./g, '_x'))))?.[1];
    if (expected !== undefined ? outcome.status !== expected : outcome.status >= 400) {
      failures.push(`${command.document}: ${command.text}\n  → ${outcome.status} ${outcome.body.slice(0, 400)}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} commands failed:\n\n${failures.join('\n\n')}`);
  assert.ok(ran >= 80, `ran ${ran} commands`);
});
