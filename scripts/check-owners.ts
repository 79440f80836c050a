// One table, one owner: fails naming every `insertInto`, `updateTable`, `deleteFrom` or `replaceInto`
// (and every lease claim or release of db/lease.ts) whose table is written outside its owner's folder (src/db/owners.ts). Migrations are exempt: they
// make the tables. Run by `npm run lint`; `ownerViolations` is what test/db/owners.test.ts plants into.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { OWNERS } from '../src/db/owners.js';

const WRITES = new Set(['insertInto', 'updateTable', 'deleteFrom', 'replaceInto']);
const LEASES = new Set(['claimLeases', 'releaseLease']);

export type SourceFile = { path: string; text: string };

/** `path` is relative to src/, with forward slashes. */
function ownsFile(owner: string, file: string): boolean {
  return file.startsWith(`${owner}/`);
}

/** Each write in `files` outside its table's owner, as `file:line: <call>('table') but <table> is owned by <owner>`. */
export function ownerViolations(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
    const check = (node: ts.Node, name: string, table: ts.Node | undefined) => {
      if (!table || !ts.isStringLiteralLike(table)) return;
      const owner: string | undefined = OWNERS[table.text as keyof typeof OWNERS];
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const call = `${name}('${table.text}')`;
      if (owner === undefined) found.push(`${file.path}:${line}: ${call} names a table src/db/owners.ts does not list`);
      else if (!ownsFile(owner, file.path)) found.push(`${file.path}:${line}: ${call}, but ${table.text} is owned by src/${owner}/`);
    };
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isPropertyAccessExpression(callee) && WRITES.has(callee.name.text)) check(node, callee.name.text, node.arguments[0]);
        // A lease claim or release (db/lease.ts) updates the table its argument names.
        if (ts.isIdentifier(callee) && LEASES.has(callee.text)) {
          const claim = node.arguments[1];
          const table =
            claim && ts.isObjectLiteralExpression(claim)
              ? claim.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === 'table')
              : undefined;
          if (table && ts.isPropertyAssignment(table)) check(node, callee.text, table.initializer);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** Every .ts file under `root` (src/), but the migrations, with its path relative to `root`. */
export function sources(root: string, dir = ''): SourceFile[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return relative === 'db/migrations' ? [] : sources(root, relative);
    return entry.name.endsWith('.ts') ? [{ path: relative, text: readFileSync(path.join(root, relative), 'utf8') }] : [];
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const violations = ownerViolations(sources(path.resolve('src')));
  if (violations.length > 0) {
    console.error(
      `Each table is written only by its owner (src/db/owners.ts); call the owner's function instead:\n  ${violations.join('\n  ')}`,
    );
    process.exit(1);
  }
}
