import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cycles,
  type ImportEdge,
  layerOf,
  parseLayers,
  readImportGraph,
  specifiersOf,
  systemFolderImports,
  upwardImports,
} from './import-graph.js';

/**
 * The shape docs/architecture.md promises, checked on the code: src/ has no import cycle, and no
 * file imports from a layer above its own. The layers are read from that page's table, so the
 * page and this test cannot disagree.
 */

const ROOT = join(import.meta.dirname, '../..');
const layers = parseLayers(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));
const graph = readImportGraph(ROOT);

/**
 * The files of src/backends/ that must import a system's folder because they put the systems
 * together. The backends themselves are wired by the composition root, src/app.ts, which is
 * outside src/backends/ (its `createBullmqBackend` and `createCeleryBackend`); the one table kept
 * here is `kinds.ts`, each kind's declared facts by its name (`factsOfKind`), for what holds only
 * a stored `type` (the monitor's samples, a status or dlq view). Nothing else may join it.
 */
const BACKEND_COMPOSITION_POINTS: readonly string[] = ['src/backends/kinds.ts'];

const described = (edge: ImportEdge) =>
  `${edge.from}:${edge.line} imports ${edge.specifier} (${layerOf(layers, edge.to)?.members.join(' ')})`;

describe('the import graph of src/', () => {
  it('docs/architecture.md lists the layers, each naming folders or files that exist', () => {
    expect(layers.length).toBeGreaterThan(5);
    const missing = layers.flatMap((layer) => layer.members).filter((m) => !existsSync(join(ROOT, m)));
    expect(missing).toEqual([]);
  });

  it('every file of src/ belongs to a layer', () => {
    expect(graph.files.filter((file) => layerOf(layers, file) === undefined)).toEqual([]);
  });

  it('every relative import names a file that exists', () => {
    expect(graph.unresolved.map((edge) => `${edge.from}:${edge.line} ${edge.specifier}`)).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    expect(upwardImports(layers, graph.edges).map(described)).toEqual([]);
  });

  it('keeps the backend contract neutral: no file of src/backends/ imports a system folder but its own', () => {
    expect(
      systemFolderImports(graph.edges, BACKEND_COMPOSITION_POINTS).map(
        (edge) => `${edge.from}:${edge.line} imports ${edge.specifier}`,
      ),
    ).toEqual([]);
  });
});

describe('the checker itself', () => {
  it("flags an import of a system's folder from the contract, a shared file or another system, and allows the rest", () => {
    const edge = (from: string, to: string) => ({ from, to, specifier: to, line: 1 });
    const flagged = systemFolderImports(
      [
        edge('src/backends/queue-backend.ts', 'src/backends/bullmq/job.ts'),
        edge('src/backends/contract/reads.ts', 'src/backends/celery/task.ts'),
        edge('src/backends/lua.ts', 'src/backends/third/index.ts'),
        edge('src/backends/bullmq/reads.ts', 'src/backends/celery/keys.ts'),
        edge('src/backends/registry.ts', 'src/backends/bullmq/index.ts'),
        edge('src/backends/bullmq/reads.ts', 'src/backends/bullmq/job.ts'),
        edge('src/backends/celery/task.ts', 'src/backends/queue-backend.ts'),
        edge('src/backends/queue-backend.ts', 'src/backends/contract/reads.ts'),
        edge('src/app.ts', 'src/backends/celery/index.ts'),
        edge('src/commands/job.ts', 'src/backends/bullmq/job.ts'),
      ],
      ['src/backends/registry.ts'],
    );
    expect(flagged.map((e) => e.from)).toEqual([
      'src/backends/queue-backend.ts',
      'src/backends/contract/reads.ts',
      'src/backends/lua.ts',
      'src/backends/bullmq/reads.ts',
    ]);
  });

  it('reads static imports, re-exports, import() and typeof import(), type-only ones included', () => {
    const text = [
      "import type { A } from './a.js';",
      'import {',
      '  b,',
      "} from '../b.js';",
      "export { c } from './c.js';",
      "const d = () => import('./d.js');",
      "type E = typeof import('./e.js');",
      "// import { f } from './f.js';",
      'const g = \'import("./g.js")\';',
    ].join('\n');
    expect(specifiersOf('x.ts', text)).toEqual([
      { specifier: './a.js', line: 1 },
      { specifier: '../b.js', line: 4 },
      { specifier: './c.js', line: 5 },
      { specifier: './d.js', line: 6 },
      { specifier: './e.js', line: 7 },
    ]);
  });

  it('finds each cycle once, with its files, and not a file that only leads into one', () => {
    const edge = (from: string, to: string) => ({ from, to, specifier: to, line: 1 });
    const found = cycles({
      files: ['a', 'b', 'c', 'd', 'e', 'f'],
      edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('d', 'a'), edge('e', 'f'), edge('f', 'e')],
    });
    expect(found).toEqual([
      ['a', 'b', 'c'],
      ['e', 'f'],
    ]);
  });

  it('reads the layers bottom first and flags an import that runs up', () => {
    const doc = [
      '## The layers',
      '',
      '| layer | job |',
      '|---|---|',
      '| `src/lib/` | helpers |',
      '| `src/guards/`, `src/audit/` | rules |',
      '| `src/app.ts` | root |',
      '',
    ].join('\n');
    const parsed = parseLayers(doc);
    expect(parsed.map((layer) => layer.members)).toEqual([
      ['src/lib/'],
      ['src/guards/', 'src/audit/'],
      ['src/app.ts'],
    ]);
    const edge = (from: string, to: string) => ({ from, to, specifier: to, line: 1 });
    const up = upwardImports(parsed, [
      edge('src/app.ts', 'src/lib/a.ts'),
      edge('src/guards/g.ts', 'src/audit/x.ts'),
      edge('src/lib/a.ts', 'src/audit/x.ts'),
    ]);
    expect(up.map((e) => e.from)).toEqual(['src/lib/a.ts']);
  });
});
