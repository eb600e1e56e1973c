/**
 * Import circles among the source modules, and imports against the layer order of ARCHITECTURE.md:
 * `tsx scripts/import-cycles.ts` prints each circle (a strongly connected group of files that import one
 * another, type imports included) and each upward import, and exits 1 when there is any. A circle means
 * two files cannot be understood, tested or moved apart; a runtime circle can also leave a binding
 * undefined at load time depending on which file is imported first.
 *
 * It reads the import and re-export statements as text (relative specifiers only), which is all the
 * project uses: no dynamic `import()` of its own modules with computed names, no path aliases.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One import edge: the importing file, the imported one, and whether it is erased at compile time. */
export type ImportEdge = { readonly from: string; readonly to: string; readonly typeOnly: boolean };

/** A circle: its files (repository-relative, sorted) and whether any of its edges survives compilation. */
export type ImportCycle = { readonly files: readonly string[]; readonly runtime: boolean };

const STATEMENT =
  /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^;]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]\s*;/g;
const DYNAMIC = /import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The `.ts` file a relative `.js` specifier names (NodeNext resolution as the project writes it). */
function resolveSpecifier(fromFile: string, specifier: string, known: ReadonlySet<string>): string | null {
  const base = resolve(dirname(fromFile), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}

/** Every relative import edge among the `.ts` files under `dir`. */
export function importEdges(dir: string): ImportEdge[] {
  const files = sourceFiles(dir);
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(STATEMENT)) {
      const to = resolveSpecifier(file, match[3] as string, known);
      if (to !== null) edges.push({ from: file, to, typeOnly: match[2] !== undefined });
    }
    for (const match of text.matchAll(DYNAMIC)) {
      const to = resolveSpecifier(file, match[1] as string, known);
      if (to !== null) edges.push({ from: file, to, typeOnly: false });
    }
  }
  return edges;
}

/**
 * The circles of an import graph, type imports included; a circle is `runtime` when its files still form
 * one through the imports that survive compilation alone.
 */
export function importCycles(edges: readonly ImportEdge[], root: string): ImportCycle[] {
  const runtimeGroups = components(edges.filter((edge) => !edge.typeOnly));
  return components(edges)
    .map((group) => {
      const members = new Set(group);
      const runtime = runtimeGroups.some((inner) => inner.every((file) => members.has(file)));
      return { files: group.map((file) => relative(root, file)).sort(), runtime };
    })
    .sort((a, b) => (a.files[0] as string).localeCompare(b.files[0] as string));
}

/** Tarjan's strongly connected components of two files or more. */
function components(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    const list = next.get(edge.from) ?? [];
    list.push(edge.to);
    next.set(edge.from, list);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) as number, index.get(to) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group);
    }
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return groups;
}

/**
 * The layers of `src/` by folder (ARCHITECTURE.md's diagram), lowest first: a module imports only from
 * its own folder or a lower layer. `index.ts` (the package root) re-exports from any.
 */
export const LAYERS: Readonly<Record<string, number>> = {
  'errors.ts': 0,
  'csv.ts': 0,
  'market-time': 1,
  occ: 1,
  pit: 2,
  pricing: 2,
  store: 2,
  query: 3,
  ingest: 3,
  billing: 4,
  service: 5,
  library: 6,
  backtest: 7,
  http: 8,
  client: 8,
  mirror: 9,
  cli: 10,
};

/** The first path segment of a file under `src/` (its folder, or the file itself at the top). */
function layerName(srcDir: string, file: string): string {
  return relative(srcDir, file).split(/[\\/]/)[0] as string;
}

/** Imports from a layer to a higher one, or to or from a folder the table does not place. */
export function upwardImports(edges: readonly ImportEdge[], srcDir: string, root: string): string[] {
  const out: string[] = [];
  for (const edge of edges) {
    const from = layerName(srcDir, edge.from);
    const to = layerName(srcDir, edge.to);
    if (from === to || from === 'index.ts') continue;
    const [fromRank, toRank] = [LAYERS[from], LAYERS[to]];
    if (fromRank === undefined || toRank === undefined || toRank >= fromRank) {
      out.push(`${relative(root, edge.from)} → ${relative(root, edge.to)}`);
    }
  }
  return out.sort();
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const edges = importEdges(join(root, 'src'));
  const cycles = importCycles(edges, root);
  for (const cycle of cycles) {
    process.stdout.write(`${cycle.runtime ? 'runtime' : 'type'} circle: ${cycle.files.join(' ↔ ')}\n`);
  }
  const upward = upwardImports(edges, join(root, 'src'), root);
  for (const line of upward) process.stdout.write(`upward import: ${line}\n`);
  process.stdout.write(`${cycles.length} import circle(s), ${upward.length} upward import(s)\n`);
  process.exitCode = cycles.length + upward.length === 0 ? 0 : 1;
}
