// Counts the places in src/ where a type is asserted rather than known: `as unknown as`, the `any`
// type, and every `as` cast (`as const` excluded: it narrows, it does not assert). Read from the
// syntax tree, so `any` in a comment or in SQL text (`= any($1)`) is not counted.
//
//   bun scripts/seam-counts.ts            totals
//   bun scripts/seam-counts.ts --by-dir   and per folder (src/modules/<feature>, src/<folder>)
//   bun scripts/seam-counts.ts --list     and every place, file:line
import { Glob } from 'bun';
import ts from 'typescript';

interface Place {
  file: string;
  line: number;
  kind: 'as unknown as' | 'any' | 'as';
  text: string;
}

const root = `${import.meta.dir}/..`;

const isCast = (node: ts.Node): node is ts.AsExpression | ts.TypeAssertion => ts.isAsExpression(node) || ts.isTypeAssertionExpression(node);
const unparenthesized = (node: ts.Node): ts.Node => (ts.isParenthesizedExpression(node) ? unparenthesized(node.parent) : node);

function placesIn(file: string, text: string): Place[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const places: Place[] = [];
  const at = (node: ts.Node, kind: Place['kind']) =>
    places.push({
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      kind,
      text: node.getText(source).replace(/\s+/g, ' ').slice(0, 100),
    });
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) at(node, 'any');
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      // The inner `as unknown` of `x as unknown as T` is one cast with its outer one.
      const innerOfDouble = node.type.kind === ts.SyntaxKind.UnknownKeyword && isCast(unparenthesized(node.parent));
      if (!isConst && !innerOfDouble) at(node, 'as');
      // `x as unknown as T`: the outer cast of an inner `as unknown`.
      const inner = ts.isParenthesizedExpression(node.expression) ? node.expression.expression : node.expression;
      if (isCast(inner) && inner.type.kind === ts.SyntaxKind.UnknownKeyword) at(node, 'as unknown as');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return places;
}

const places: Place[] = [];
for await (const file of new Glob('src/**/*.{ts,tsx}').scan({ cwd: root })) {
  if (file.endsWith('.d.ts')) continue;
  places.push(...placesIn(file, await Bun.file(`${root}/${file}`).text()));
}

const kinds: Place['kind'][] = ['as unknown as', 'any', 'as'];
const count = (of: Place[], kind: Place['kind']) => of.filter((p) => p.kind === kind).length;
const folderOf = (file: string) => {
  const parts = file.split('/');
  return parts[1] === 'modules' ? parts.slice(0, 3).join('/') : parts.length > 2 ? parts.slice(0, 2).join('/') : file;
};

console.log(kinds.map((kind) => `${kind.padEnd(14)} ${count(places, kind)}`).join('\n'));

const args = new Set(process.argv.slice(2));
if (args.has('--by-dir')) {
  const folders = [...new Set(places.map((p) => folderOf(p.file)))].sort();
  console.log(`\n${'folder'.padEnd(34)}${kinds.map((k) => k.padStart(15)).join('')}`);
  for (const folder of folders) {
    const inFolder = places.filter((p) => folderOf(p.file) === folder);
    console.log(`${folder.padEnd(34)}${kinds.map((k) => String(count(inFolder, k)).padStart(15)).join('')}`);
  }
}
if (args.has('--list')) {
  console.log('');
  for (const p of places.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line))
    console.log(`${p.kind.padEnd(14)} ${p.file}:${p.line}  ${p.text}`);
}
