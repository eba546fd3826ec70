import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { collectSecrets, createQueueOps, type QueueOps } from '../app.js';
import { backgroundJobs, runLeaderJobsOnce } from '../background/jobs.js';
import { createJobScheduler, type JobScheduler } from '../background/scheduler.js';
import { formatDecimal, formatNumber } from '../blocks/format.js';
import { parseConfig } from '../config/load.js';
import { isOpsError } from '../errors.js';
import { createEscalation, type Escalation } from '../escalation/runtime.js';
import { type Catalog, isLocale, LOCALE_IDS, type Locale, messages } from '../i18n/index.js';
import { createLogger, type Logger, scrubSecrets } from '../lib/logger.js';
import { createConsoleSession, runInteractive, runLines } from '../transports/console/console.js';
import { DEMO_GROUPS, DEMO_MONITOR_SECONDS, DEMO_PEOPLE, writeDemoConfig } from './config.js';
import { type StandInDocker, writeStandInDocker } from './docker.js';
import { backfillSamples, DEMO_HISTORY } from './history.js';
import { type DemoRedis, resolveDemoRedis } from './redis.js';
import { type DemoScale, type SeededDemo, seedDemo, willUseRealCelery } from './seed.js';

export interface DemoArgs {
  scale: DemoScale;
  user: string;
  db?: number;
  scripts: string[];
  /** The config's `locale:` for the demo's own config, and the language of its own lines. */
  locale: Locale;
  simulateCelery: boolean;
  help: boolean;
}

/** Parses `npm run demo -- …`; throws a one-line Error on a bad option, in `t`'s words. */
export function parseDemoArgs(argv: readonly string[], t: Catalog['demo'] = messages('en').demo): DemoArgs {
  const parsed = (() => {
    try {
      return parseArgs({
        args: [...argv],
        options: {
          script: { type: 'string', multiple: true },
          scale: { type: 'string' },
          user: { type: 'string' },
          db: { type: 'string' },
          locale: { type: 'string' },
          'simulate-celery': { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
        strict: true,
        allowPositionals: false,
      });
    } catch (error) {
      // Node's own wording names the option; say it in the demo's language.
      const unknown =
        (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
          ? /'([^']+)'/.exec((error as Error).message)?.[1]
          : undefined;
      throw new Error(unknown ? t.options.unknown(unknown) : (error as Error).message);
    }
  })();
  const { values } = parsed;
  const scale = values.scale ?? 'full';
  if (scale !== 'full' && scale !== 'small') throw new Error(t.options.scale(scale));
  const user = values.user ?? 'U0ALICE';
  if (!/^[UW][A-Z0-9]+$/.test(user)) throw new Error(t.options.user(user));
  let db: number | undefined;
  if (values.db !== undefined) {
    db = Number(values.db);
    if (!Number.isInteger(db) || db < 0 || db > 15) throw new Error(t.options.db);
  }
  const locale = values.locale ?? 'en';
  if (!isLocale(locale)) throw new Error(t.options.locale(locale, LOCALE_IDS));
  return {
    scale,
    user,
    db,
    scripts: values.script ?? [],
    locale,
    simulateCelery: values['simulate-celery'] ?? false,
    help: values.help ?? false,
  };
}

/** The process the demo runs in; tests give buffers. */
export interface DemoIo {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
  /** Registers a cleanup to run on SIGINT/SIGTERM; returns an unregister function. */
  onSignal?: (cleanup: () => Promise<void>) => () => void;
}

/**
 * `npm run demo`: Redis (shared or private) → seed both systems → config → app → console. Returns
 * the exit code; everything it started is stopped and everything it wrote is removed before that.
 */
export async function runDemo(io: DemoIo): Promise<number> {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  // `--locale tr` counts even on a line that is otherwise wrong.
  const asked = askedLocale(io.argv);
  let args: DemoArgs;
  try {
    args = parseDemoArgs(io.argv, messages(asked).demo);
  } catch (error) {
    io.stderr.write(`${messages(asked).demo.badOption((error as Error).message)}\n`);
    return 2;
  }
  const locale = args.locale;
  const t = messages(locale).demo;
  if (args.help) {
    say(t.usage);
    return 0;
  }

  const workDir = mkdtempSync(join(tmpdir(), 'queue-ops-demo-'));
  let redis: DemoRedis | undefined;
  let seeded: SeededDemo | undefined;
  let app: QueueOps | undefined;
  let monitor: { escalation: Escalation; jobs: JobScheduler } | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () => {
    cleaning ??= (async () => {
      await monitor?.jobs.stop();
      await monitor?.escalation.monitor.stop().catch(() => {});
      await app?.close().catch(() => {});
      await seeded?.stop().catch(() => {});
      await redis?.release().catch(() => {});
      rmSync(workDir, { recursive: true, force: true });
    })();
    return cleaning;
  };
  const unregister = io.onSignal?.(async () => {
    say(t.stopping);
    await cleanup();
  });

  try {
    try {
      const redisDir = join(workDir, 'redis');
      mkdirSync(redisDir);
      redis = await resolveDemoRedis(io.env, { db: args.db, dir: redisDir });
      if (redis.sharedProblem) say(redis.sharedProblem);
      if (redis.kind === 'private') say(t.startingRedis);
    } catch (error) {
      io.stderr.write(`${t.noRedis(error instanceof Error ? error.message : String(error))}\n`);
      return 1;
    }
    const realCelery = willUseRealCelery({ simulateCelery: args.simulateCelery });
    say(t.seedingBullmq('pushizo'));
    say(realCelery ? t.seedingCeleryReal('zeus') : t.seedingCelerySimulated('zeus'));
    seeded = await seedDemo({
      redisUrl: redis.url,
      scale: args.scale,
      workDir,
      simulateCelery: !realCelery,
    });
    say(t.seeded(formatNumber(seeded.total, locale), formatDecimal(seeded.seconds, 1, locale)));

    const configPath = writeDemoConfig(workDir, redis.url, seeded.plan, locale);
    const config = parseConfig(readFileSync(configPath, 'utf8'), {}, configPath);
    const secrets = collectSecrets(config, io.env);
    // `scale pushizo/dispatch` runs `docker compose`: the stand-in first on the PATH answers it.
    const docker = writeStandInDocker(workDir);
    const env = { ...io.env, PATH: [docker.binDir, io.env.PATH].filter(Boolean).join(':') };
    const chartsDir = join(workDir, 'charts');
    mkdirSync(chartsDir);
    const logFile = join(workDir, 'queue-ops.log');
    const logger = createLogger({
      level: 'info',
      secrets,
      base: { name: 'queue-ops', via: 'console' },
      destination: { write: (line: string) => appendFileSync(logFile, line) },
    });
    // The whole runtime, not just the read path: guards, approvals and the audit trail over the
    // demo's own SQLite store, so the two-person flow can be shown.
    app = await createQueueOps({ config, env, logger });
    // The monitor as the bot runs it, on a short interval, over a few hours of back-filled
    // samples: alerts, trend and timeline have content on the first command.
    say(t.monitoring);
    const now = Date.now();
    await backfillSamples(app, { ...DEMO_HISTORY, now });
    monitor = await startMonitor(app, logger);

    printBanner(say, t, { redis, seeded, configPath, docker, chartsDir, workDir, user: args.user });

    const session = createConsoleSession({
      dispatcher: app.dispatcher,
      user: args.user,
      logger,
      locale,
      filesDir: chartsDir,
    });
    const write = (text: string) => io.stdout.write(scrubSecrets(text, secrets));
    if (args.scripts.length > 0) {
      const { failures } = await runLines(session, args.scripts, write);
      return failures > 0 ? 1 : 0;
    }
    if (!io.stdin.isTTY) {
      const lines = createInterface({ input: io.stdin, terminal: false });
      const { failures } = await runLines(session, lines, write);
      return failures > 0 ? 1 : 0;
    }
    await runInteractive(session, { input: io.stdin, output: io.stdout, locale });
    return 0;
  } catch (error) {
    // A demo that cannot start says why in one line, never with a stack trace.
    const reason = isOpsError(error) ? messages(locale).errors.describe(error) : (error as Error).message;
    io.stderr.write(`queue-ops demo: ${scrubSecrets(String(reason).split('\n')[0] ?? '')}\n`);
    return 1;
  } finally {
    unregister?.();
    await cleanup();
  }
}

/** The banner before the console: where Redis and the files are, who is who, what to try. */
function printBanner(
  say: (line: string) => void,
  t: Catalog['demo'],
  where: {
    redis: DemoRedis;
    seeded: SeededDemo;
    configPath: string;
    docker: StandInDocker;
    chartsDir: string;
    workDir: string;
    user: string;
  },
): void {
  const { redis, seeded, configPath, docker, chartsDir, workDir } = where;
  say('');
  say(t.bannerTitle);
  say(
    redis.kind === 'private'
      ? t.bannerRedisPrivate(redis.displayUrl)
      : t.bannerRedisShared(redis.displayUrl, redis.db),
  );
  say(t.bannerConfig(configPath));
  say(t.bannerCli(configPath));
  say(seeded.celeryMode === 'real' ? t.bannerCeleryReal : t.bannerCelerySimulated);
  say(t.bannerPeople(DEMO_PEOPLE.operator, DEMO_PEOPLE.admins[0], DEMO_PEOPLE.admins[1], where.user));
  say(t.bannerApprovals(DEMO_PEOPLE.operator, DEMO_PEOPLE.admins[0], DEMO_PEOPLE.admins[1]));
  say(t.bannerApprovalsThen(DEMO_PEOPLE.admins[0], DEMO_PEOPLE.admins[1]));
  say(
    t.bannerScaleCompose(
      `${DEMO_GROUPS.compose.system}/${DEMO_GROUPS.compose.group}`,
      DEMO_GROUPS.compose.service,
      docker.callsLog,
    ),
  );
  say(
    seeded.celeryMode === 'real'
      ? t.bannerScalePool(
          `${DEMO_GROUPS.pool.system}/${DEMO_GROUPS.pool.group}`,
          seeded.plan.zeus.worker.name,
        )
      : t.bannerScalePoolSimulated(`${DEMO_GROUPS.pool.system}/${DEMO_GROUPS.pool.group}`),
  );
  say(
    t.bannerRestartCompose(
      `${DEMO_GROUPS.compose.system}/${DEMO_GROUPS.compose.group}`,
      DEMO_GROUPS.compose.service,
    ),
  );
  say(
    seeded.celeryMode === 'real'
      ? t.bannerRestartPool(
          `${DEMO_GROUPS.pool.system}/${DEMO_GROUPS.pool.group}`,
          seeded.plan.zeus.worker.name,
        )
      : t.bannerRestartPoolSimulated(`${DEMO_GROUPS.pool.system}/${DEMO_GROUPS.pool.group}`),
  );
  say(t.bannerMonitor(DEMO_MONITOR_SECONDS, DEMO_HISTORY.hours));
  say(t.bannerTrend(join(chartsDir, 'trend-pushizo-dispatch-ios-1h.png')));
  say(t.bannerFiles(workDir));
  say(t.bannerHint);
  say('');
}

/** The `--locale` a demo line asks for (`--locale tr`, `--locale=tr`), read without parsing it. */
function askedLocale(argv: readonly string[]): Locale {
  for (let i = 0; i < argv.length; i++) {
    const value =
      argv[i] === '--locale' ? argv[i + 1] : argv[i]!.startsWith('--locale=') ? argv[i]!.slice(9) : undefined;
    if (isLocale(value)) return value;
  }
  return 'en';
}

/**
 * The monitor as the bot runs it (its leader's background jobs, this process the only replica),
 * after one tick of its own: alerts, trend and timeline have content on the first command.
 */
async function startMonitor(app: QueueOps, logger: Logger) {
  const escalation = createEscalation({ runtime: app, logger, label: 'demo' });
  const leader = { escalation, limits: app.limits };
  await runLeaderJobsOnce(leader, logger);
  const jobs = createJobScheduler({
    jobs: backgroundJobs({ logger, leader }),
    leadership: escalation.monitor.lease,
    logger,
  });
  await jobs.start();
  return { escalation, jobs };
}
