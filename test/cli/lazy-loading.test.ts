import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue as Queue6 } from 'bullmq';
import { Queue as Queue5 } from 'bullmq5';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { connectionFor, deletePrefix } from '../helpers/bullmq-jobs.js';
import { tempDir, withSchema } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { POSTGRES_REQUIRED, POSTGRES_URL, probePostgres } from '../helpers/postgres.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * The command line loads only what the verb needs (the seams: src/lib/lazy.ts for packages, and a
 * named `load…()` beside its one caller for our own modules in front of one). Each test runs
 * the built `bin/queue-ops.js` as a user does, under a probe that records every module the process
 * loads, Node's own included, and names what it must not have loaded. The command line is a bundle
 * (dist/bundle/, scripts/build.js): a file of it that was loaded counts as every module it holds
 * (its `sources.json`), so code linked into the bundle is seen as loaded just as a file would be.
 * Inside the runtime our modules behind a seam run only when it is called; what they would start
 * shows as Node's modules (gzip for the purge archive, child processes for Compose…) and native
 * addons (better-sqlite3's, for a SQLite store), which the probe sees one by one.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/queue-ops.js');
const PROBE = resolve(import.meta.dirname, '../fixtures/load-probe/register.mjs');
const BUNDLE = join(ROOT, 'dist/bundle');

/** Libraries no read-only command needs: the bot's Slack side, other stores, actions' libraries. */
const HEAVY = [
  '@slack/bolt',
  '@slack/web-api',
  '@slack/socket-mode',
  'pg',
  'bullmq',
  'bullmq5',
  '@kubernetes/client-node',
  'echarts',
  '@resvg/resvg-js',
  'prom-client',
  'tsx',
  'esbuild',
  'typescript',
];

interface ProbedRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Every package any loaded file belongs to (`node_modules/<name>/…`, scoped names whole). */
  packages: Set<string>;
  files: string[];
}

function packagesIn(files: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    for (const match of file.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)) names.add(match[1]!);
  }
  return names;
}

/** Each loaded file of the bundle, followed by the modules it was linked from (absolute paths). */
function withBundledSources(loaded: readonly string[]): string[] {
  const sources = JSON.parse(readFileSync(join(BUNDLE, 'sources.json'), 'utf8')) as Record<string, string[]>;
  return loaded.flatMap((entry) => {
    const file = entry.startsWith('file:') ? fileURLToPath(entry) : entry;
    if (dirname(file) !== BUNDLE) return [entry];
    const inputs = sources[basename(file)];
    if (!inputs) throw new Error(`${file} is not in dist/bundle/sources.json: a stale build?`);
    return [entry, ...inputs.map((input) => join(ROOT, input))];
  });
}

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir('lazy');
});
afterAll(() => dir.remove());

function probed(args: string[]): Promise<ProbedRun> {
  const out = join(dir.dir, `loaded-${randomBytes(4).toString('hex')}.txt`);
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', PROBE, BIN, ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOAD_PROBE_OUT: out },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        const files = withBundledSources(readFileSync(out, 'utf8').split('\n').filter(Boolean));
        rmSync(out, { force: true });
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr, files, packages: packagesIn(files) });
      },
    );
  });
}

/** The heavy packages a run loaded; `[]` is the answer every read-only command must give. */
const heavyIn = (run: ProbedRun, except: string[] = []) =>
  HEAVY.filter((name) => run.packages.has(name) && !except.includes(name));

/**
 * Node's modules that only some verbs or configs need: the purge archive's gzip and line reader
 * (purge, undo, the retention sweep), child processes (Compose worker groups), TLS (`rediss://`),
 * and `assert`, which two packages call only on a broken invariant (loading it also builds
 * `process.stderr`). `status` of a plain `redis://` system needs none of them.
 */
const BUILTINS_FOR_OTHERS = ['node:zlib', 'node:readline', 'node:child_process', 'node:tls', 'node:assert'];
const builtinsIn = (run: ProbedRun) => BUILTINS_FOR_OTHERS.filter((name) => run.files.includes(name));

/** A first `status` on a new store, which also runs the day's archive retention sweep. */
async function firstRun(config: string): Promise<void> {
  const first = await probed(['--config', config, '--json', 'status']);
  expect(first.code, first.stderr).toBe(0);
}

/** better-sqlite3's native addon: linked JavaScript aside, what opening a SQLite store loads. */
const sqliteAddonIn = (run: ProbedRun) => run.files.some((file) => file.endsWith('/better_sqlite3.node'));

describe('what the command line loads', () => {
  const redisUrl = testRedisUrl();
  let prefix: string;

  beforeEach(() => {
    prefix = `qlazy${randomBytes(5).toString('hex')}`;
  });
  afterEach(async () => {
    await deletePrefix(redisUrl, prefix);
  });

  it('--help answers from the argument parser and the message catalog alone: no package, no runtime', async () => {
    const run = await probed(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: queue-ops');
    // the probe works: it saw the bundle's entry, which holds the entry point
    expect(run.files.some((f) => f.endsWith('/dist/bundle/queue-ops.cjs'))).toBe(true);
    expect(run.files.some((f) => f.endsWith('/dist/transports/cli/main.js'))).toBe(true);
    expect([...run.packages]).toEqual([]);
    expect(run.files.filter((f) => /\/dist\/(app|store|backends|transports\/cli\/run)/.test(f))).toEqual([]);
  });

  it('--help with a config that says locale: tr answers in Turkish, still with no package and no runtime', async () => {
    const config = writeConfigFile(dir.dir, {
      store: `sqlite:${dir.dir}/help.db`,
      locale: 'tr',
      systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:1')],
    });
    const run = await probed(['--config', config, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Kullanım: queue-ops');
    expect([...run.packages]).toEqual([]);
    expect(run.files.filter((f) => /\/dist\/(app|store|backends|transports\/cli\/run)/.test(f))).toEqual([]);
  });

  it('--json status of a BullMQ system loads ioredis and SQLite, and neither BullMQ, Bolt, the Web API nor pg', async () => {
    const queue = new Queue6('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
    await queue.add('send', { n: 1 });
    await queue.close();
    const config = writeConfigFile(dir.dir, {
      store: `sqlite:${dir.dir}/status.db`,
      systems: [bullmqSystem('pushizo', redisUrl, prefix)],
    });
    // A store's first run also sweeps the day's old archives (after its answer): the run
    // looked at is one that finds the day's sweep done, as every later one does.
    await firstRun(config);
    const run = await probed(['--config', config, '--json', 'status']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).data.systems[0].queues[0]).toMatchObject({
      name: 'dispatch-ios',
      waiting: 1,
    });
    expect(run.packages).toContain('ioredis');
    expect(sqliteAddonIn(run)).toBe(true);
    expect(heavyIn(run)).toEqual([]);
    expect(builtinsIn(run)).toEqual([]);
  });

  it('--json status of a Celery system loads none of them either', async () => {
    const db = 9;
    const admin = new Redis(`${redisUrl}/${db}`);
    const queue = `lazy${randomBytes(4).toString('hex')}`;
    await admin.lpush(queue, 'not-a-real-message-but-counted');
    const config = writeConfigFile(dir.dir, {
      store: `sqlite:${dir.dir}/celery.db`,
      systems: [
        { name: 'zeus', type: 'celery', redis: `${redisUrl}/${db}`, queues: [queue], inspectTimeoutMs: 50 },
      ],
    });
    try {
      // A store's first run also sweeps the day's old archives (after its answer): the run
      // looked at is one that finds the day's sweep done, as every later one does.
      await firstRun(config);
      const run = await probed(['--config', config, '--json', 'status']);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout).data.systems[0].queues[0]).toMatchObject({ name: queue, waiting: 1 });
      expect(heavyIn(run)).toEqual([]);
      expect(builtinsIn(run)).toEqual([]);
    } finally {
      await admin.del(queue);
      admin.disconnect();
    }
  });

  describe('trend, over one stored sample', () => {
    // Its own prefix: the one of each test is made after this describe's beforeAll.
    const trendPrefix = `qlazy${randomBytes(5).toString('hex')}`;
    let config: string;

    beforeAll(async () => {
      config = writeConfigFile(dir.dir, {
        store: `sqlite:${dir.dir}/trend.db`,
        systems: [bullmqSystem('pushizo', redisUrl, trendPrefix, { queues: ['dispatch-ios'] })],
      });
      // One stored sample, as the monitor writes it, so there is something to draw.
      const seed = await probed(['--config', config, '--json', 'status']);
      expect(seed.code, seed.stderr).toBe(0);
      const store = await openStore(`sqlite:${dir.dir}/trend.db`);
      const at = new Date(Date.now() - 60_000).toISOString();
      const queue = {
        name: 'dispatch-ios',
        waiting: 3,
        active: 0,
        delayed: 0,
        failed: 0,
        oldestWaitingSeconds: null,
        workers: 0,
      };
      await store.escalation.appendSample(
        at,
        JSON.stringify({
          at: Date.parse(at),
          systems: [{ name: 'pushizo', type: 'bullmq', ok: true, workers: [], queues: [queue] }],
        }),
      );
      await store.close();
    });
    afterAll(async () => {
      await deletePrefix(redisUrl, trendPrefix);
    });

    it('prints sparklines without loading echarts or resvg', async () => {
      const text = await probed(['--config', config, 'trend', 'pushizo/dispatch-ios']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^waiting\s+\S+ 3$/m);
      expect(heavyIn(text)).toEqual([]);
    });

    it('with --out loads echarts and resvg, and nothing else heavy', async () => {
      const out = await probed([
        '--config',
        config,
        'trend',
        'pushizo/dispatch-ios',
        '--out',
        `${dir.dir}/t.png`,
      ]);
      expect(out.code, out.stderr).toBe(0);
      expect(out.packages).toContain('echarts');
      expect(out.packages).toContain('@resvg/resvg-js');
      expect(heavyIn(out, ['echarts', '@resvg/resvg-js'])).toEqual([]);
    });
  });

  it('pause loads the BullMQ major that wrote the queue, and only that one', async () => {
    const connection = connectionFor(redisUrl);
    const legacy = new Queue5('legacy-events', { connection, prefix });
    const current = new Queue6('events', { connection, prefix });
    await legacy.add('e', {});
    await current.add('e', {});
    await Promise.all([legacy.close(), current.close()]);
    const config = writeConfigFile(dir.dir, {
      store: `sqlite:${dir.dir}/pause.db`,
      roles: TEST_ROLES,
      policies: { pause: { role: 'operator', approvals: 0 } },
      systems: [bullmqSystem('pushizo', redisUrl, prefix)],
    });
    const five = await probed([
      '--config',
      config,
      '--user',
      'U0ALICE',
      '--json',
      'pause',
      'pushizo/legacy-events',
    ]);
    expect(five.code, five.stdout + five.stderr).toBe(0);
    expect(heavyIn(five)).toEqual(['bullmq5']);
    const six = await probed(['--config', config, '--user', 'U0ALICE', '--json', 'pause', 'pushizo/events']);
    expect(six.code, six.stdout + six.stderr).toBe(0);
    expect(heavyIn(six)).toEqual(['bullmq']);
  });
  it('purge loads the archive format its preview sizes with gzip, which status never loads', async () => {
    const queue = new Queue6('dispatch-web', { connection: connectionFor(redisUrl), prefix });
    await queue.add('send', { n: 1 });
    await queue.close();
    const config = writeConfigFile(dir.dir, {
      store: `sqlite:${dir.dir}/purge.db`,
      roles: TEST_ROLES,
      systems: [bullmqSystem('pushizo', redisUrl, prefix)],
    });
    // A store's first run also sweeps the day's old archives (after its answer): the run
    // looked at is one that finds the day's sweep done, as every later one does.
    await firstRun(config);
    await firstRun(config);
    const status = await probed(['--config', config, '--json', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.files).not.toContain('node:zlib');
    const purge = await probed([
      '--config',
      config,
      '--user',
      'U0BOB',
      '--json',
      'purge',
      'pushizo/dispatch-web',
    ]);
    expect(purge.code, purge.stdout + purge.stderr).toBe(0);
    expect(JSON.parse(purge.stdout).data.request).toMatchObject({ action: 'purge', status: 'pending' });
    expect(purge.files).toContain('node:zlib');
    expect(heavyIn(purge)).toEqual([]);
  });
});

describe('no work before the answer', () => {
  const redisUrl = testRedisUrl();

  it('status of one system never connects to another one, even one that would hang', async () => {
    // Accepts connections and never answers: a Redis that is SIGSTOPped, or a dead proxy.
    const sockets: Socket[] = [];
    const hanging = createServer((socket) => sockets.push(socket));
    await new Promise<void>((done) => hanging.listen(0, '127.0.0.1', done));
    const port = (hanging.address() as { port: number }).port;
    const config = writeConfigFile(dir.dir, {
      store: `sqlite:${dir.dir}/two.db`,
      systems: [
        bullmqSystem('pushizo', redisUrl, 'qlazy-two'),
        { name: 'zeus', type: 'celery', redis: `redis://127.0.0.1:${port}/0` },
      ],
    });
    try {
      const one = await probed(['--config', config, '--json', 'status', 'pushizo']);
      expect(one.code, one.stderr).toBe(0);
      expect(JSON.parse(one.stdout).data.systems.map((s: { name: string }) => s.name)).toEqual(['pushizo']);
      expect(sockets).toHaveLength(0);
      // The same config asked about zeus does go there (and reports it down).
      const all = await probed(['--config', config, '--json', 'status', 'zeus']);
      expect(JSON.parse(all.stdout).data.systems[0]).toMatchObject({ name: 'zeus', ok: false });
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => hanging.close(done));
    }
  });
});

describe('what the command line loads with a PostgreSQL store', async () => {
  const unreachable = await probePostgres();
  if (unreachable && POSTGRES_REQUIRED) throw new Error(`PostgreSQL is required here: ${unreachable}`);
  const redisUrl = testRedisUrl();
  const schema = `qo_lazy_${randomBytes(5).toString('hex')}`;

  afterAll(async () => {
    if (unreachable) return;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  it.skipIf(Boolean(unreachable))('loads pg and not better-sqlite3 (its addon)', async () => {
    const config = writeConfigFile(dir.dir, {
      store: withSchema(POSTGRES_URL, schema),
      systems: [bullmqSystem('pushizo', redisUrl, 'qlazy-empty')],
    });
    const run = await probed(['--config', config, '--json', 'status']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.packages).toContain('pg');
    expect(sqliteAddonIn(run)).toBe(false);
    expect(heavyIn(run, ['pg'])).toEqual([]);
  });
});

describe('the seams stay few and named', () => {
  /** Each `import()` in src/ (comments and `typeof import('…')` types left out), with its place. */
  function dynamicImports(): { at: string; file: string; code: string; previous: string }[] {
    const src = join(ROOT, 'src');
    const found: { at: string; file: string; code: string; previous: string }[] = [];
    for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(entry.parentPath, entry.name);
      const file = path.slice(src.length + 1);
      const lines = readFileSync(path, 'utf8')
        .split('\n')
        .map((line) => line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, ''));
      lines.forEach((code, index) => {
        if (/(?<!typeof\s)\bimport\s*\(/.test(code))
          found.push({ at: `${file}:${index + 1}`, file, code, previous: lines[index - 1] ?? '' });
      });
    }
    return found;
  }

  /** `const loadX = … import(…)`, the import on the declaration's line or the next. */
  const namedSeam = (found: { code: string; previous: string }) =>
    [found.code, found.previous].some((line) => /^\s*(export )?const load[A-Z]\w* = /.test(line));

  it('src/ loads a package with import() only in src/lib/lazy.ts, and lazy.ts loads none of our modules', () => {
    const found = dynamicImports();
    const packagesElsewhere = found.filter(
      (f) => f.file !== 'lib/lazy.ts' && /\bimport\s*\(\s*['"][^.'"]/.test(f.code),
    );
    expect(packagesElsewhere.map((f) => f.at)).toEqual([]);
    const oursInLazy = found.filter(
      (f) => f.file === 'lib/lazy.ts' && /\bimport\s*\(\s*(?!['"][^.'"])/.test(f.code),
    );
    expect(oursInLazy.map((f) => f.at)).toEqual([]);
  });

  it('every other import() in src/ is a named load…() seam, beside the one module that uses it', () => {
    expect(
      dynamicImports()
        .filter((found) => !namedSeam(found))
        .map((f) => f.at),
    ).toEqual([]);
  });
});
