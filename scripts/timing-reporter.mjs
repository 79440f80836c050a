// A third reporter for scripts/test.mjs: the files that took longest, summed over their top-level
// tests. CI stops a run at its time limit and keeps only the tail of its output: these lines, printed
// last by test.mjs, say where the time went.
import path from 'node:path';

export default async function* timing(source) {
  const byFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (nesting !== 0 || !file) continue;
    const name = path.relative(process.cwd(), file);
    byFile.set(name, (byFile.get(name) ?? 0) + (details?.duration_ms ?? 0));
  }
  const slowest = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15);
  const total = [...byFile.values()].reduce((sum, ms) => sum + ms, 0);
  yield `${Math.round(total / 1000)} s in tests over ${byFile.size} files; the slowest:\n`;
  yield slowest.map(([name, ms]) => `${String(Math.round(ms / 1000)).padStart(5)} s  ${name}\n`).join('');
}
