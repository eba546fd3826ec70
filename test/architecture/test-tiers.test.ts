import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UNIT_TESTS } from '../unit-tier.js';
import { specifiersOf } from './import-graph.js';

/**
 * The two test tiers. `npm run test:unit` runs the files listed in test/unit-tier.ts with no
 * global setup (no private Redis, no build); `npm test` runs every file. A listed file must need
 * no Redis, process or network: neither it nor a test file it imports (helpers and fixtures,
 * followed to the end) may name one of the modules below. A new test file is integration until
 * someone lists it, so it cannot land in the unit tier unnoticed.
 */

const ROOT = join(import.meta.dirname, '../..');

/** Packages and Node modules that mean Redis, a process, Slack's HTTP side or the network. */
const INTEGRATION_PACKAGES = [
  'ioredis',
  'bullmq',
  'bullmq5',
  'pg',
  'nock',
  '@slack/bolt',
  '@slack/web-api',
  'node:child_process',
  'node:net',
  'node:http',
  'node:https',
  'node:worker_threads',
];

/** Our own modules that start or reach one (by path from the repository's root, without `.ts`). */
const INTEGRATION_MODULES = [
  'test/helpers/test-redis',
  'test/helpers/global-setup',
  'test/helpers/bullmq-jobs',
  'test/helpers/bullmq-libs',
  'test/helpers/celery-worker',
  'test/helpers/cli-run',
  'test/helpers/postgres',
  'test/helpers/latency-proxy',
  'test/helpers/loopback-slack',
  'test/faults/private-postgres',
  'test/transports/slack/harness',
  'src/lib/redis-server',
  'src/transports/slack/bot',
];

/** Where a relative specifier of `from` leads, as a path from the root without its extension. */
function target(from: string, specifier: string): string {
  return relative(ROOT, resolve(ROOT, dirname(from), specifier)).replace(/\.(js|ts)$/, '');
}

/**
 * Why `file` is not a unit test: the chain of imports that reaches an integration module or
 * package, or undefined when none does. Test files are followed; src/ files are not (what src/
 * does is tested, not judged, and its packages load without connecting).
 */
function integrationReach(file: string, seen = new Set<string>()): string | undefined {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const text = readFileSync(join(ROOT, file), 'utf8');
  for (const { specifier, line } of specifiersOf(file, text)) {
    const where = `${file}:${line} imports ${specifier}`;
    if (!specifier.startsWith('.')) {
      if (
        INTEGRATION_PACKAGES.includes(specifier) ||
        INTEGRATION_PACKAGES.some((p) => specifier.startsWith(`${p}/`))
      )
        return where;
      continue;
    }
    const to = target(file, specifier);
    if (INTEGRATION_MODULES.includes(to)) return where;
    const next = `${to}.ts`;
    if (to.startsWith('test/') && existsSync(join(ROOT, next))) {
      const deeper = integrationReach(next, seen);
      if (deeper) return `${where} → ${deeper}`;
    }
  }
  return undefined;
}

function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the unit tier (test/unit-tier.ts)', () => {
  it('lists test files that exist, once each', () => {
    expect(UNIT_TESTS.length).toBeGreaterThan(30);
    expect(UNIT_TESTS.filter((file) => !file.endsWith('.test.ts') || !existsSync(join(ROOT, file)))).toEqual(
      [],
    );
    expect(new Set(UNIT_TESTS).size).toBe(UNIT_TESTS.length);
  });

  it('holds no file that reaches Redis, a process or the network, through any test helper', () => {
    const offenders = UNIT_TESTS.map((file) => integrationReach(file)).filter(Boolean);
    expect(offenders).toEqual([]);
  });

  it('names integration modules that exist (a renamed helper must be renamed here too)', () => {
    expect(INTEGRATION_MODULES.filter((module) => !existsSync(join(ROOT, `${module}.ts`)))).toEqual([]);
  });

  it('would catch an integration test listed there (the check is not blind)', () => {
    expect(integrationReach('test/guards/rate-limit.test.ts')).toMatch(/test-redis|nock|harness/);
    // Through a helper: the Slack tests reach Bolt and nock through test/transports/slack/harness.ts.
    expect(integrationReach('test/transports/slack/listeners.test.ts')).toBeDefined();
  });

  it('is a part of npm test’s files: every test file is in one run or both', () => {
    const all = new Set(testFiles('test'));
    expect(UNIT_TESTS.filter((file) => !all.has(file))).toEqual([]);
  });
});
