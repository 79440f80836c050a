import assert from 'node:assert/strict';
import fs from 'node:fs';
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
