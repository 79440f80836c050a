// Builds the web console (console/) into dist/www/console/, which src/console-host/routes.ts serves:
// 1. the SDK's types, generated from the service's OpenAPI document (`npm run openapi`, which
//    `npm run build` and `npm run lint` run first; run here when they are missing);
// 2. a strict type check of the console (esbuild only strips types);
// 3. one minified bundle of JavaScript and one of CSS, and the page that loads them.
// Run by `npm run build` and by the console's tests. Files are written through a rename, so two
// builds running at once never leave a half-written file.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'www', 'console');
const sdkTypes = path.join(root, 'sdk', 'src', 'schema.ts');

function writeAtomically(file: string, contents: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, contents);
  fs.renameSync(temporary, file);
}

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Console</title>
<link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/console.css">
<script type="module" src="/console/console.js"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`;

export async function buildConsole(): Promise<void> {
  if (!fs.existsSync(sdkTypes)) execFileSync('npm', ['run', '-s', 'openapi'], { cwd: root, stdio: 'inherit' });

  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'console', 'tsconfig.json')],
    {
      stdio: 'inherit',
    },
  );

  const result = await build({
    entryPoints: { console: path.join(root, 'console', 'src', 'main.tsx') },
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    write: false,
    outdir: out,
    logLevel: 'warning',
  });
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents);
  writeAtomically(path.join(out, 'index.html'), INDEX_HTML);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole();
  process.exit(0);
}
