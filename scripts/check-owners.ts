// One table, one owner: fails naming every write (`insertInto`, `updateTable`, `deleteFrom`, `replaceInto`,
// a lease claim or release of db/lease.ts, or `insert into`/`update`/`delete from` in raw SQL) whose table is
// written outside its owner's folder, and every read (`selectFrom`, a join, `from`/`join` in raw SQL)
// outside its owner's folder and the declared read models (src/db/owners.ts). A table name held in a
// variable is followed through its type: a literal union is checked member by member, a plain string fails.
// Migrations are exempt: they make the tables. Run by `npm run lint`; `ownerViolations` is what
// test/db/owners.test.ts plants into.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { OWNERS, READ_MODELS, TABLE_GENERIC } from '../src/db/owners.js';

const WRITES = new Set(['insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto']);
const READS = new Set([
  'selectFrom',
  'innerJoin',
  'leftJoin',
  'rightJoin',
  'fullJoin',
  'crossJoin',
  'innerJoinLateral',
  'leftJoinLateral',
  'crossJoinLateral',
]);
// A lease or a delivery queue's claim or release (db/lease.ts, events/queue.ts) names the table it updates,
// in the object it is given or in the type of the held row it is given.
const LEASES = new Set(['claimLeases', 'releaseLease', 'claimDueAttempts', 'releaseAttempt']);
// sql.table/sql.id/sql.raw name a table (or carry SQL) inside a raw template.
const SQL_PIECES = new Set(['table', 'id', 'raw']);
const RAW_SQL = /\b(insert\s+(?:or\s+\w+\s+)?into|replace\s+into|update|delete\s+from|from|join)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi;

export type SourceFile = { path: string; text: string };
type Access = 'read' | 'write';

/** `path` is relative to src/, with forward slashes. */
function ownsFile(owner: string, file: string): boolean {
  return file.startsWith(`${owner}/`);
}

function declared(places: Record<string, string>, file: string): boolean {
  return Object.keys(places).some((place) => (place.endsWith('/') ? file.startsWith(place) : file === place));
}

/** A Kysely table argument: `'pages'`, `'pages as p'`, `'pages p'`. */
function tableName(text: string): string {
  return text.trim().split(/\s+/)[0] ?? text;
}

/** A program over `files` (kept in memory, under `root`), the rest (node_modules, libs) from disk. */
function program(root: string, files: SourceFile[]): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    lib: ['lib.es2023.d.ts'],
  };
  const memory = new Map(files.map((f) => [path.join(root, f.path), f.text]));
  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => memory.has(name) || fileExists(name);
  host.readFile = (name) => memory.get(name) ?? readFile(name);
  host.getSourceFile = (name, language, onError, fresh) => {
    const text = memory.get(name);
    return text === undefined ? getSourceFile(name, language, onError, fresh) : ts.createSourceFile(name, text, language, true);
  };
  return ts.createProgram([...memory.keys()], options, host);
}

/**
 * Each access in `files` outside its table's owner (and, for reads, outside the read models), as
 * `file:line: <call>('table'), but <table> is owned by src/<owner>/`. `root` is where the files sit (src/),
 * so their imports resolve and a table name held in a variable is followed through its type.
 */
export function ownerViolations(files: SourceFile[], root = path.resolve('src')): string[] {
  const found: string[] = [];
  const types = program(root, files);
  const checker = types.getTypeChecker();
  for (const file of files) {
    const source = types.getSourceFile(path.join(root, file.path));
    if (!source) throw new Error(`${file.path} was not read`);
    const readModel = declared(READ_MODELS, file.path);
    const generic = declared(TABLE_GENERIC, file.path);
    const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    const report = (node: ts.Node, access: Access, call: string, table: string, known: boolean) => {
      const owner: string | undefined = OWNERS[table as keyof typeof OWNERS];
      const at = `${file.path}:${lineOf(node)}: ${call}`;
      if (owner === undefined) {
        // A name the map lacks is a table only when Kysely names it; raw SQL also names CTEs and aliases.
        if (known && access === 'write') found.push(`${at} names a table src/db/owners.ts does not list`);
        return;
      }
      if (ownsFile(owner, file.path) || (access === 'read' && readModel)) return;
      found.push(`${at}, but ${table} is owned by src/${owner}/${access === 'read' ? ' (a read outside the read models)' : ''}`);
    };
    /** The tables an argument can name: its literal, or its type's literals; undefined when unseen. */
    const tablesOf = (node: ts.Expression): string[] | undefined => {
      if (ts.isStringLiteralLike(node)) return [tableName(node.text)];
      const type = checker.getTypeAtLocation(node);
      const members = type.isUnion() ? type.types : [type];
      if (members.every((t) => t.isStringLiteral())) return members.map((t) => tableName((t as ts.StringLiteralType).value));
      return undefined;
    };
    const subquery = (node: ts.Expression) => {
      if (ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isTaggedTemplateExpression(node)) return true;
      const type = checker.getTypeAtLocation(node);
      // An aliased subquery or expression (`qb.as('t')`, `sql\`...\`.as('t')`) is read where it was built.
      return !(type.flags & ts.TypeFlags.StringLike) && !type.isUnion();
    };
    const check = (node: ts.Node, access: Access, call: string, table: ts.Expression | undefined) => {
      if (!table) return;
      if (ts.isArrayLiteralExpression(table)) {
        for (const element of table.elements) check(node, access, call, element);
        return;
      }
      if (!ts.isStringLiteralLike(table) && subquery(table)) return;
      const names = tablesOf(table);
      if (names === undefined) {
        if (!generic)
          found.push(
            `${file.path}:${lineOf(node)}: ${call}(${table.getText(source)}) names its table in a variable the lint cannot follow`,
          );
        return;
      }
      // A function written once for any table (db/lease.ts) is checked where its caller names the table.
      if (generic && !ts.isStringLiteralLike(table)) return;
      for (const name of names) report(node, access, `${call}('${name}')`, name, true);
    };
    /** The table a lease's argument names: its `table` as written, or, for a held value, its `table`'s type. */
    const leaseTable = (node: ts.Node, call: string, claim: ts.Expression) => {
      if (ts.isObjectLiteralExpression(claim)) {
        const table = claim.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === 'table');
        if (table && ts.isPropertyAssignment(table)) check(node, 'write', call, table.initializer);
        return;
      }
      const property = checker.getTypeAtLocation(claim).getProperty('table');
      const type = property && checker.getTypeOfSymbolAtLocation(property, claim);
      const members = type === undefined ? [] : type.isUnion() ? type.types : [type];
      if (members.length > 0 && members.every((t) => t.isStringLiteral())) {
        for (const t of members) {
          const name = (t as ts.StringLiteralType).value;
          report(node, 'write', `${call}('${name}')`, name, true);
        }
      } else if (!generic) {
        found.push(`${file.path}:${lineOf(node)}: ${call}(${claim.getText(source)}) names its table in a variable the lint cannot follow`);
      }
    };
    const scanSql = (node: ts.Node, text: string) => {
      for (const match of text.matchAll(RAW_SQL)) {
        const keyword = (match[1] ?? '').toLowerCase().replace(/\s+/g, ' ');
        const access: Access = keyword === 'from' || keyword === 'join' ? 'read' : 'write';
        const name = (match[2] ?? '').toLowerCase();
        report(node, access, `sql '${keyword} ${name}'`, name, false);
      }
    };
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isPropertyAccessExpression(callee)) {
          const name = callee.name.text;
          if (WRITES.has(name)) check(node, 'write', name, node.arguments[0]);
          if (READS.has(name)) check(node, 'read', name, node.arguments[0]);
          const receiver = callee.expression;
          if (ts.isIdentifier(receiver) && receiver.text === 'sql' && SQL_PIECES.has(name)) {
            const arg = node.arguments[0];
            if (arg && name === 'raw' && ts.isStringLiteralLike(arg)) scanSql(node, arg.text);
            else if (arg && name !== 'raw') check(node, 'read', `sql.${name}`, arg);
          }
        }
        // A lease claim or release (db/lease.ts) updates the table its argument names.
        if (ts.isIdentifier(callee) && LEASES.has(callee.text)) {
          const claim = node.arguments[1];
          if (claim) leaseTable(node, callee.text, claim);
        }
      }
      if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'sql') {
        const template = node.template;
        // The literal parts joined: a keyword and its table may sit on either side of a `${...}`.
        const text = ts.isNoSubstitutionTemplateLiteral(template)
          ? template.text
          : [template.head.text, ...template.templateSpans.map((s) => s.literal.text)].join(' ? ');
        scanSql(node, text);
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
  const root = path.resolve('src');
  const violations = ownerViolations(sources(root), root);
  if (violations.length > 0) {
    console.error(
      `Each table is written and read only by its owner (src/db/owners.ts), reads also by a declared read model; call the owner's function instead:\n  ${violations.join('\n  ')}`,
    );
    process.exit(1);
  }
}
