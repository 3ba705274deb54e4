// Finds import cycles between files under src/ and prints them, one per line.
//
//   bun scripts/import-cycles.ts            every cycle, then the count
//   bun scripts/import-cycles.ts --max N    the same, and exit 1 when there are more than N
//   bun scripts/import-cycles.ts --runtime  leave out `import type` / `export type` lines,
//                                           which TypeScript erases and so never load a module
//   bun scripts/import-cycles.ts --dir D    another folder than src/ (the script's own test)
//
// A cycle is counted once per import edge that closes one: for every import a → b whose two ends sit
// in the same strongly connected component, the shortest path back from b to a makes a cycle, and
// rotations of the same cycle count once. Listing every elementary cycle instead would explode on a
// tangle (a 16-file circle holds thousands); this way each printed cycle is short, and cutting any
// one import in it shows up in the count.
//
// The imports are read with regular expressions, not a parser: relative specifiers only (packages
// cannot close a cycle through src/), static `import … from`, `export … from`, side-effect
// `import '…'` and `import('…')` with a literal string.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

type Options = { max: number | undefined; runtimeOnly: boolean; directory: string };

function parseOptions(argv: string[]): Options {
  const options: Options = { max: undefined, runtimeOnly: false, directory: resolve(import.meta.dir, '../src') };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    if (argument === '--runtime') options.runtimeOnly = true;
    else if (argument === '--dir') options.directory = resolve(argv[++index] ?? '.');
    else if (argument === '--max') {
      const value = Number(argv[++index]);
      if (!Number.isInteger(value) || value < 0) throw new Error('--max takes a whole number');
      options.max = value;
    } else if (argument === '--help' || argument === '-h') {
      console.log('usage: bun scripts/import-cycles.ts [--max N] [--runtime] [--dir D]');
      process.exit(0);
    } else throw new Error(`unknown argument ${argument}`);
  }
  return options;
}

function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory)) {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry) && !entry.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

// Block comments and whole-line `//` comments go first, so an example import in a comment does not
// count; a `//` after code is left alone because it may sit inside a string (a URL).
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const importStatement = /\b(import|export)\s+(type\s+)?([\w*\s{},$]*?)\s*from\s*['"]([^'"]+)['"]/g;
const sideEffectImport = /\bimport\s*['"]([^'"]+)['"]/g;
const dynamicImport = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

type Import = { specifier: string; typeOnly: boolean };

function importsOf(text: string): Import[] {
  const found: Import[] = [];
  for (const match of text.matchAll(importStatement)) {
    const clause = match[3] ?? '';
    // `import { type A, type B } from` is erased as a whole, like `import type { A, B } from`.
    const names = clause.match(/\{([^}]*)\}/)?.[1];
    const everyNameIsType =
      names !== undefined &&
      !/^[^{]*\w[^{]*\{/.test(clause) &&
      names
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean)
        .every((name) => name.startsWith('type '));
    found.push({ specifier: match[4] ?? '', typeOnly: match[2] !== undefined || everyNameIsType });
  }
  for (const match of text.matchAll(sideEffectImport)) found.push({ specifier: match[1] ?? '', typeOnly: false });
  for (const match of text.matchAll(dynamicImport)) found.push({ specifier: match[1] ?? '', typeOnly: false });
  return found;
}

function resolveSpecifier(from: string, specifier: string, known: Set<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')];
  return candidates.find((candidate) => known.has(candidate));
}

function importGraph(sourceRoot: string, runtimeOnly: boolean): Map<string, Set<string>> {
  const files = sourceFiles(sourceRoot);
  const known = new Set(files);
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const { specifier, typeOnly } of importsOf(withoutComments(readFileSync(file, 'utf8')))) {
      if (runtimeOnly && typeOnly) continue;
      const target = resolveSpecifier(file, specifier, known);
      if (target !== undefined) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

// Tarjan's strongly connected components, iterative so a deep import chain cannot overflow the stack.
function componentOf(graph: Map<string, Set<string>>): Map<string, number> {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const component = new Map<string, number>();
  let counter = 0;
  let components = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; targets: Iterator<string> }[] = [];
    const enter = (node: string) => {
      index.set(node, counter);
      lowLink.set(node, counter);
      counter++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, targets: (graph.get(node) ?? new Set()).values() });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const next = frame.targets.next();
      if (!next.done) {
        const target = next.value;
        if (!index.has(target)) enter(target);
        else if (onStack.has(target)) lowLink.set(frame.node, Math.min(lowLink.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) lowLink.set(parent.node, Math.min(lowLink.get(parent.node)!, lowLink.get(frame.node)!));
      if (lowLink.get(frame.node) === index.get(frame.node)) {
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.set(member, components);
        } while (member !== frame.node);
        components++;
      }
    }
  }
  return component;
}

// The shortest path from `from` to `to` inside one component (breadth first), ends included.
function shortestPath(graph: Map<string, Set<string>>, component: Map<string, number>, from: string, to: string): string[] {
  const cameFrom = new Map<string, string>([[from, from]]);
  const queue = [from];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    if (node === to) break;
    for (const target of graph.get(node) ?? []) {
      if (cameFrom.has(target) || component.get(target) !== component.get(from)) continue;
      cameFrom.set(target, node);
      queue.push(target);
    }
  }
  const path = [to];
  while (path[0] !== from) path.unshift(cameFrom.get(path[0]!)!);
  return path;
}

function findCycles(graph: Map<string, Set<string>>): string[][] {
  const component = componentOf(graph);
  const cycles = new Map<string, string[]>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (component.get(target) !== component.get(file)) continue;
      const cycle = target === file ? [file] : shortestPath(graph, component, target, file);
      // The same cycle is found from each of its edges: key it by its rotation that starts smallest.
      const smallest = cycle.indexOf([...cycle].sort()[0]!);
      const rotated = [...cycle.slice(smallest), ...cycle.slice(0, smallest)];
      cycles.set(rotated.join('\n'), rotated);
    }
  }
  return [...cycles.values()].sort((a, b) => a.length - b.length || a.join().localeCompare(b.join()));
}

const options = parseOptions(process.argv.slice(2));
const cycles = findCycles(importGraph(options.directory, options.runtimeOnly));
const name = (file: string) => relative(options.directory, file);
for (const cycle of cycles) console.log([...cycle, cycle[0]!].map(name).join(' → '));
const filesInCycles = new Set(cycles.flat()).size;
console.log(
  `${cycles.length} import cycles between files in src/ (${filesInCycles} files in them)${options.runtimeOnly ? ', type-only imports left out' : ''}`,
);
if (options.max !== undefined && cycles.length > options.max) {
  console.error(`more than --max ${options.max}`);
  process.exit(1);
}
