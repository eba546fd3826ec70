import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No code above the backends chooses a behaviour by the kind of a system: a branch on
 * `type === 'bullmq'` or `'celery'` would silently give a third system one of today's two
 * behaviours. What differs between systems is what the backend declares (`src/backends/facts.ts`,
 * its optional methods). Comparisons with a kind's name stay only where a system is built or
 * described by kind: its backend, its config shape, the composition root, the demo, the strings.
 */

const ROOT = join(import.meta.dirname, '../..');

/** Today's kinds; a new one is added here with its backend. */
const KINDS = new Set(['bullmq', 'celery']);

/** Where a comparison with a kind's name is the point: files or folders, from the repository's root. */
const ALLOWED = ['src/backends/', 'src/config/systems/', 'src/app.ts', 'src/demo/', 'src/i18n/'];

const COMPARISONS = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

const isKind = (node: ts.Node) => ts.isStringLiteralLike(node) && KINDS.has(node.text);

/** Each `x === 'celery'` (either side, any equality) and `case 'bullmq':` of one file, by line. */
function kindComparisons(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node) =>
    `${path}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${node.getText(source)}`;
  const visit = (node: ts.Node) => {
    if (
      ts.isBinaryExpression(node) &&
      COMPARISONS.has(node.operatorToken.kind) &&
      (isKind(node.left) || isKind(node.right))
    )
      found.push(at(node));
    else if (ts.isCaseClause(node) && isKind(node.expression)) found.push(at(node.expression));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('no branch on a system kind outside where systems are built', () => {
  it('the checker sees comparisons either way round, loose or strict, and switch cases', () => {
    const text = [
      "if (backend.type === 'celery') a();",
      "const b = 'bullmq' !== s.type;",
      "switch (kind) { case 'celery': break; }",
      "const fine = { type: 'bullmq' };",
      "if (group.type === 'celery-pool') c();",
    ].join('\n');
    expect(kindComparisons('x.ts', text).map((hit) => hit.split(': ')[0])).toEqual([
      'x.ts:1',
      'x.ts:2',
      'x.ts:3',
    ]);
  });

  it('src/ outside the allowed places compares nothing with a kind; a difference is a fact the backend declares', () => {
    const offenders = sourceFiles('src')
      .filter((path) => !ALLOWED.some((allowed) => path === allowed || path.startsWith(allowed)))
      .flatMap((path) => kindComparisons(path, readFileSync(join(ROOT, path), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('every allowed place exists', () => {
    expect(ALLOWED.filter((allowed) => !existsSync(join(ROOT, allowed)))).toEqual([]);
  });
});
