// Each area has a front door (issue 47): src/<area>/index.ts exports what other areas may use of it.
// Fails naming every import, re-export or import() from outside an area of one of its inner files.
// The shared floors (db/, http/, config/, types/) and src/'s top-level files are no areas: their
// files are imported where they are. Inside an area, its files import each other directly (an
// area's own index would make a circle). Run by `npm run lint`; `doorViolations` is what
// test/doors.test.ts plants into.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { type SourceFile, sources } from './check-owners.js';

/** Folders under src/ that every area builds on; they keep no front door. */
export const FLOORS = new Set(['db', 'http', 'config', 'types']);

/** `file` is a path relative to src/ with forward slashes; the specifier as written. */
function violation(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, '');
  const [area, ...inside] = target.split('/');
  if (!area || area === '..' || inside.length === 0 || FLOORS.has(area)) return undefined;
  if (file.split('/')[0] === area || inside.join('/') === 'index') return undefined;
  return `imports src/${target}.ts, inside src/${area}/: import it from src/${area}/index.ts (export it there if it is missing)`;
}

export function doorViolations(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
    const check = (node: ts.Node, specifier: ts.Expression | undefined) => {
      if (!specifier || !ts.isStringLiteralLike(specifier)) return;
      const problem = violation(file.path, specifier.text);
      if (problem) found.push(`${file.path}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${problem}`);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) check(node, node.moduleSpecifier);
      else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) check(node, node.arguments[0]);
      else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) check(node, node.argument.literal);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const violations = doorViolations(sources(path.resolve('src')));
  if (violations.length > 0) {
    console.error(`Another area is entered by its front door (src/<area>/index.ts):\n  ${violations.join('\n  ')}`);
    process.exit(1);
  }
}
