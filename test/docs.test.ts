// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The anchors GitHub gives a file's headings: lowercased, punctuation dropped, spaces to dashes. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, title] of fs.readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)) {
    const base = title!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replaceAll(' ', '-');
    const n = seen.get(base);
    seen.set(base, (n ?? -1) + 1);
    out.add(n === undefined ? base : `${base}-${n + 1}`);
  }
  return out;
}

function* files(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.git', 'test-artifacts'].includes(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else if (/\.(md|ts|tsx|mjs)$/.test(entry.name)) yield full;
  }
}

// Other files point into docs/decisions.md by section; a heading renamed there must not leave them dangling.
test('every link to a section of docs/decisions.md names a heading it has', () => {
  const decisions = path.join(ROOT, 'docs', 'decisions.md');
  const known = anchors(decisions);
  assert.ok(known.has('index') && known.has('new-decisions'), 'it opens with an index and ends with where new entries go');
  const dangling: string[] = [];
  let links = 0;
  for (const file of files(ROOT)) {
    const text = fs.readFileSync(file, 'utf8');
    const pattern = file === decisions ? /\]\(#([\w-]+)\)/g : /decisions\.md#([\w-]+)/g;
    for (const [, anchor] of text.matchAll(pattern)) {
      links++;
      if (!known.has(anchor!)) dangling.push(`${path.relative(ROOT, file)}: #${anchor}`);
    }
  }
  assert.deepEqual(dangling, []);
  assert.ok(links > 20, `only ${links} links found: the pattern no longer matches them`);
});

test('the index of docs/decisions.md lists every topic', () => {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'decisions.md'), 'utf8');
  const index = text.slice(text.indexOf('## Index'), text.indexOf('\n## ', text.indexOf('## Index') + 1));
  const topics = [...text.matchAll(/^## (.+)$/gm)].map(([, t]) => t!).filter((t) => t !== 'Index');
  for (const topic of topics) assert.match(index, new RegExp(`\\[${topic}\\]\\(#`), `${topic} is in the index`);
});

/** The documents a reader follows to configure something: the README and every page of docs/. */
function readerDocs(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  return ['README.md', ...docs.map((f) => path.join('docs', f))];
}

// issue 37: a desktop configuration that says `npx pam-mcp` makes npx ask the public registry
// outside the clone, where anyone may own that name. Every one shown runs the clone's own bin.
test('every MCP desktop configuration runs a local bin, never one npx would fetch', () => {
  const blocks: { file: string; command: string; args: string[] }[] = [];
  for (const file of readerDocs()) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    for (const [, json] of text.matchAll(/```json\n([\s\S]*?)```/g)) {
      if (!json!.includes('mcpServers')) continue;
      const config = JSON.parse(json!) as { mcpServers: Record<string, { command: string; args?: string[] }> };
      for (const server of Object.values(config.mcpServers)) blocks.push({ file, command: server.command, args: server.args ?? [] });
    }
    // Named only to warn against it ("never a bare `npx pam-mcp`"), or with --no-install.
    for (const found of text.matchAll(/npx ((?:--?[\w-]+ )*)pam-mcp/g)) {
      const warned = text.slice(0, found.index).endsWith('bare `');
      assert.ok(warned || found[1]!.includes('--no-install'), `${file} tells a reader to run ${found[0]}`);
    }
  }
  assert.ok(
    blocks.some((b) => b.file === 'README.md') && blocks.some((b) => b.file === 'docs/mcp.md'),
    'the README and docs/mcp.md each show one',
  );
  for (const { file, command, args } of blocks) {
    if (command === 'npx') {
      assert.ok(args.includes('--no-install'), `${file}: npx without --no-install`);
      continue;
    }
    assert.equal(command, 'node', `${file}: ${command}`);
    const bin = /^\/absolute\/path\/to\/clone\/(.+)$/.exec(args[0] ?? '')?.[1];
    assert.ok(bin, `${file}: the bin is given by the clone's absolute path: ${args[0]}`);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'sdk', 'package.json'), 'utf8')) as { bin: Record<string, string> };
    assert.equal(bin, path.posix.join('sdk', pkg.bin['pam-mcp']!), `${file}: the path is the SDK's pam-mcp bin`);
    // Run as configured (from elsewhere, without its settings): the bin starts and refuses with its exit code 2.
    const run = spawnSync(process.execPath, [path.join(ROOT, bin)], {
      cwd: os.tmpdir(),
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /set PAM_API_URL/);
  }
});

// The README's way for another project to install the SDK names the tarball `npm pack` writes.
test('the README installs the SDK from the tarball npm pack makes', () => {
  const pack = spawnSync('npm', ['pack', '-w', 'sdk', '--dry-run', '--json'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(pack.status, 0, pack.stderr);
  const [{ filename, files }] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.ok(readme.includes('npm pack -w sdk --pack-destination ..'), 'the README packs the SDK');
  assert.ok(readme.includes(`npm install ../${filename}`), `the README installs ../${filename}`);
  assert.ok(readme.includes(`"@pam/sdk": "file:../${filename}"`), 'the README shows the file: dependency');
  assert.ok(
    files.some((f) => f.path === 'bin/pam-mcp.js'),
    'the tarball carries the pam-mcp bin',
  );
});

// docs/contributing.md's "In-process caches" is the catalogue a reader trusts: it must say what src/db/caches.ts builds.
test('the catalogue of in-process caches matches their declarations', async () => {
  const { CACHES } = await import('../src/db/caches.js');
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'contributing.md'), 'utf8');
  const section = text.split('## In-process caches')[1]?.split('\n## ')[0] ?? '';
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Cache ') && !line.startsWith('| ---'))
    .map((line) =>
      line
        .split('|')
        .map((cell) => cell.trim())
        .slice(1, -1),
    );
  const MB = 1024 * 1024;
  const declared = Object.values(CACHES);
  for (const cache of declared) {
    const row = rows.find((r) => r[0] === cache.name);
    assert.ok(row, `a row for ${cache.name}`);
    const [, file = '', , bound = ''] = row;
    assert.ok(file.includes(`\`${cache.file}\``), `${cache.name}: its file, ${cache.file}`);
    assert.ok(
      bound.startsWith(`${cache.max.toLocaleString('en-US')} entries, ${cache.maxBytes / MB} MB`),
      `${cache.name}: its bound, not ${bound}`,
    );
    if (cache.ttlMs !== undefined) assert.ok(bound.includes(`${cache.ttlMs / 1000} s each`), `${cache.name}: its time to live`);
    if (cache.maxEntryBytes !== undefined)
      assert.ok(bound.includes(`at most ${cache.maxEntryBytes / MB} MB`), `${cache.name}: its largest entry`);
  }
  // A cache that hangs on a tenant's counters is built by countedCache, which reads what its declaration
  // names; the two that also watch SQLite's data_version read their sequence in their own statement.
  for (const [name, cache] of Object.entries(CACHES)) {
    const watches: readonly string[] = cache.invalidatedBy;
    if (!watches.some((i) => i.endsWith(':<tenant>')) || watches.includes('data_version')) continue;
    const source = fs.readFileSync(path.join(ROOT, cache.file), 'utf8');
    assert.ok(source.includes(`countedCache(CACHES.${name}`), `${cache.file} builds ${cache.name} with countedCache`);
  }
  // What is kept in process but is not an lru-cache: a single value, and statements held by the drivers' wrappers.
  const notDeclared = rows.map((r) => r[0]).filter((name) => !declared.some((c) => c.name === name));
  assert.deepEqual(notDeclared, ["Today's daily secret", 'Compiled statements']);
  for (const file of files(path.join(ROOT, 'src'))) {
    if (file.endsWith(path.join('db', 'caches.ts'))) continue;
    assert.doesNotMatch(
      fs.readFileSync(file, 'utf8'),
      /new LRUCache|from 'lru-cache'/,
      `${path.relative(ROOT, file)} builds its cache through src/db/caches.ts`,
    );
  }
});
