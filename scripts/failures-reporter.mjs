// A second reporter for scripts/test.mjs: it writes nothing while the suite runs and, at the end, one
// line per failed test (its file and line, its name, the first line of its error, and an assertion's
// two values). CI keeps only the tail of a long run's output, where the TAP of the SQLite pass's
// failures is long gone; test.mjs prints these lines of both passes last.
import path from 'node:path';

/** The line of the test file the error was thrown at: a flaky failure seen once must say where. */
function lineIn(file, error) {
  if (!file) return '';
  const base = path.basename(file);
  const at = String(error?.stack ?? '')
    .split('\n')
    .find((frame) => frame.includes(base));
  const match = at?.match(/:(\d+):\d+\)?\s*$/);
  return match ? `:${match[1]}` : '';
}

const shown = (value) => {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(JSON.stringify(value) ?? value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

export default async function* failures(source) {
  const lines = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A suite fails with its failed tests: those are the lines worth reading.
    if (details?.type === 'suite') continue;
    const error = details?.error?.cause ?? details?.error;
    const message = String(error?.message ?? error ?? '').split('\n')[0];
    const values = error?.code === 'ERR_ASSERTION' ? ` (actual ${shown(error.actual)}, expected ${shown(error.expected)})` : '';
    const where = file ? `${path.relative(process.cwd(), file)}${lineIn(file, error)}` : '?';
    lines.push(`${where}: ${name}: ${message}${values}`);
  }
  yield lines.map((line) => `${line}\n`).join('');
}
