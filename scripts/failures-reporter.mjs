// A second reporter for scripts/test.mjs: it writes nothing while the suite runs and, at the end, one
// line per failed test (its file, its name, the first line of its error). CI keeps only the tail of
// a long run's output, where the TAP of the SQLite pass's failures is long gone; test.mjs prints
// these lines of both passes last.
import path from 'node:path';

export default async function* failures(source) {
  const lines = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A suite fails with its failed tests: those are the lines worth reading.
    if (details?.type === 'suite') continue;
    const error = details?.error?.cause ?? details?.error;
    const message = String(error?.message ?? error ?? '').split('\n')[0];
    lines.push(`${file ? path.relative(process.cwd(), file) : '?'}: ${name}: ${message}`);
  }
  yield lines.map((line) => `${line}\n`).join('');
}
