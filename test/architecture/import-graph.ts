import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of `src/`, read with TypeScript's own parser (so multi-line imports, comments
 * and strings are read as the compiler reads them), and the two things the architecture test
 * checks on it: cycles and imports that run from a lower layer to a higher one.
 *
 * Every edge counts, `import type` included: a type import is still a file that must exist, be
 * read and agree before this one compiles, and a type that lives in the wrong layer is the usual
 * first step of a cycle of values.
 */

/** A file of src/, by its path from the repository's root (`src/commands/purge.ts`). */
export type SourcePath = string;

export interface ImportEdge {
  from: SourcePath;
  to: SourcePath;
  /** The specifier as written (`'../pipeline/types.js'`). */
  specifier: string;
  /** 1-based line of the import, for the failure message. */
  line: number;
}

export interface ImportGraph {
  files: SourcePath[];
  edges: ImportEdge[];
  /** Relative specifiers that name no file of src/: the checker would be blind to them. */
  unresolved: ImportEdge[];
}

function sourceFiles(root: string, dir: string): SourcePath[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return sourceFiles(root, path);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
    })
    .sort();
}

/** Each module specifier a file names: static imports and re-exports, `import()`, `typeof import()`. */
export function specifiersOf(path: string, text: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { specifier: string; line: number }[] = [];
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ specifier: node.text, line });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node.moduleReference.expression);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `'./x.js'` from `src/a/b.ts` → `src/a/x.ts` (NodeNext: the `.js` names the compiled `.ts`). */
function resolveRelative(root: string, from: SourcePath, specifier: string): SourcePath | undefined {
  const target = resolve(root, dirname(from), specifier);
  const candidates = [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, join(target, 'index.ts')];
  const hit = candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
  return hit === undefined ? undefined : relative(root, hit);
}

/** The graph of every `.ts` file under `dir` (default `src`) of the repository at `root`. */
export function readImportGraph(root: string, dir = 'src'): ImportGraph {
  const files = sourceFiles(root, dir);
  const edges: ImportEdge[] = [];
  const unresolved: ImportEdge[] = [];
  for (const from of files) {
    for (const { specifier, line } of specifiersOf(from, readFileSync(join(root, from), 'utf8'))) {
      if (!specifier.startsWith('.')) continue; // a package or a node: built-in
      const to = resolveRelative(root, from, specifier);
      if (to === undefined) unresolved.push({ from, to: specifier, specifier, line });
      // Outside src/ (bin/stale-build.js) is not part of the layering.
      else if (to.startsWith(`${dir}/`)) edges.push({ from, to, specifier, line });
    }
  }
  return { files, edges, unresolved };
}

/**
 * The strongly connected components of more than one file (and any file that imports itself):
 * each is a cycle, or several tangled together. Tarjan's algorithm, iterative so that a deep
 * graph cannot overflow the stack.
 */
export function cycles(graph: Pick<ImportGraph, 'files' | 'edges'>): SourcePath[][] {
  const next = new Map<SourcePath, SourcePath[]>(graph.files.map((file) => [file, []]));
  for (const edge of graph.edges) next.get(edge.from)?.push(edge.to);
  const index = new Map<SourcePath, number>();
  const low = new Map<SourcePath, number>();
  const onStack = new Set<SourcePath>();
  const stack: SourcePath[] = [];
  const components: SourcePath[][] = [];
  let counter = 0;
  for (const start of graph.files) {
    if (index.has(start)) continue;
    const work: { file: SourcePath; child: number }[] = [{ file: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = next.get(frame.file) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++]!;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ file: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.file, Math.min(low.get(frame.file)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) === index.get(frame.file)) {
        const component: SourcePath[] = [];
        let member: SourcePath;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.file);
        const selfImport = graph.edges.some((e) => e.from === frame.file && e.to === frame.file);
        if (component.length > 1 || selfImport) components.push(component.sort());
      }
    }
  }
  return components.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

/** One layer: its place from the bottom (0) and what it holds (`src/lib/`, `src/app.ts`). */
export interface Layer {
  rank: number;
  members: string[];
}

/**
 * The layers as docs/architecture.md lists them: the table under the heading "The layers",
 * bottom first, each row's first cell naming its folders (`src/lib/`) or files (`src/app.ts`)
 * in backticks. That table is the one list; this test and the reader both read it.
 */
export function parseLayers(markdown: string): Layer[] {
  const lines = markdown.split('\n');
  const heading = lines.findIndex((line) => /^#+ The layers\b/.test(line));
  if (heading === -1) throw new Error('docs/architecture.md has no "The layers" heading');
  const header = lines.findIndex((line, i) => i > heading && line.startsWith('|'));
  const layers: Layer[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const members = [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    layers.push({ rank: layers.length, members });
  }
  return layers;
}

/** The layer a file belongs to: the one naming the file itself or its deepest folder. */
export function layerOf(layers: readonly Layer[], file: SourcePath): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const member of layer.members) {
      const matches = member.endsWith('/') ? file.startsWith(member) : file === member;
      if (matches && (!best || member.length > best.length)) best = { layer, length: member.length };
    }
  }
  return best?.layer;
}

/** Imports from a file of a lower layer to a file of a higher one. */
export function upwardImports(layers: readonly Layer[], edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.filter((edge) => {
    const from = layerOf(layers, edge.from);
    const to = layerOf(layers, edge.to);
    return from !== undefined && to !== undefined && to.rank > from.rank;
  });
}

/** The folders under src/backends/ that are no one system's: the contract, written by concern. */
export const NEUTRAL_BACKEND_FOLDERS: readonly string[] = ['src/backends/contract/'];

/**
 * The system's folder a file of src/backends/ is in (`src/backends/bullmq/`): every folder right
 * under src/backends/ but the neutral ones. Undefined for a file outside any system's folder
 * (`src/backends/queue-backend.ts`, `src/backends/contract/reads.ts`, `src/backends/lua.ts`).
 */
export function systemFolderOf(file: SourcePath): string | undefined {
  const match = /^src\/backends\/([^/]+)\//.exec(file);
  if (!match) return undefined;
  const folder = `src/backends/${match[1]}/`;
  return NEUTRAL_BACKEND_FOLDERS.includes(folder) ? undefined : folder;
}

/**
 * Imports inside src/backends/ that reach into a system's folder from outside it: the contract and
 * the files every system shares must not know any one system (else a third system would inherit
 * the first two's shapes), and one system does not lean on another's. `allowed` names the files
 * that compose the systems and so must import them.
 */
export function systemFolderImports(
  edges: readonly ImportEdge[],
  allowed: readonly SourcePath[] = [],
): ImportEdge[] {
  return edges.filter((edge) => {
    if (!edge.from.startsWith('src/backends/') || allowed.includes(edge.from)) return false;
    const target = systemFolderOf(edge.to);
    return target !== undefined && systemFolderOf(edge.from) !== target;
  });
}
