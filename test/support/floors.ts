// The floors of src/ (docs/architecture.md): a file may import from its own floor and
// the floors below it, never from one above. A folder is on one floor; the few files
// at src/'s root are placed one by one. The import graph is read from the sources.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Lowest first. */
export const FLOORS: readonly (readonly string[])[] = [
  ['model', 'errors.ts'],
  ['metrics.ts'],
  ['tls', 'storage', 'ratelimit', 'print'],
  ['db'],
  ['filter'],
  ['engine'],
  ['events', 'feed'],
  ['auth'],
  ['resources'],
  ['webhooks', 'mail'],
  ['jobs'],
  ['http'],
  ['admin'],
  ['portal'],
  ['app.ts', 'server.ts', 'store.ts', 'config.ts'],
  ['cli'],
];

/** A file's floor: its folder's, or (at the root) its own; -1 when it has none. */
export function floorOf(file: string): number {
  const place = file.includes('/') ? file.slice(0, file.indexOf('/')) : file;
  return FLOORS.findIndex((names) => names.includes(place));
}

/** Every relative import (and re-export) of every source file under `root`, as paths relative to it. */
export function importsOf(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|js)$/.test(name)) {
        const text = readFileSync(path, 'utf8');
        const targets = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.[^'"]+)['"]/g)]
          .map((m) => relative(root, resolve(dirname(path), m[1]!)));
        graph.set(relative(root, path), targets);
      }
    }
  };
  walk(root);
  return graph;
}

/** Imports that go up a floor, and files on no floor, as readable lines. */
export function upwardImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const problems: string[] = [];
  for (const [file, targets] of graph) {
    const from = floorOf(file);
    if (from < 0) { problems.push(`${file} is on no floor`); continue; }
    for (const target of targets) {
      const to = floorOf(target);
      if (to > from) problems.push(`${file} (${FLOORS[from]!.join(', ')}) imports ${target} (${FLOORS[to]!.join(', ')}), a floor above`);
    }
  }
  return problems;
}

/** The import cycles among the files of the graph (each as its files, a strongly connected set of two or more). */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const edges = (file: string) => (graph.get(file) ?? []).map((t) => t.replace(/\.js$/, '.ts')).filter((t) => graph.has(t));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of edges(file)) {
      if (!index.has(next)) visit(next);
      if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, low.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const set = stack.splice(stack.indexOf(file));
    if (set.length > 1 || edges(file).includes(file)) cycles.push(set);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}
