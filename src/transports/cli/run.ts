import { writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { type App, collectSecrets, createQueueOps, createReadOnlyApp, type QueueOps } from '../../app.js';
import { wordsForAction } from '../../blocks/action-ids.js';
import { errorMessage } from '../../blocks/error.js';
import { formatNumber } from '../../blocks/format.js';
import type { Message } from '../../blocks/message.js';
import { plain, renderText } from '../../blocks/render-text.js';
import { loadConfigFile, withPathsFrom } from '../../config/load.js';
import { peekConfigFileLocale } from '../../config/locale-peek.js';
import type { Config } from '../../config/schema.js';
import { ErrorCode, isOpsError, isUsageError, OpsError, terminalText } from '../../errors.js';
import { deniedEntry } from '../../guards/middleware.js';
import { inLocale, isLocale, type Locale, messages } from '../../i18n/index.js';
import { createDeferredLogger } from '../../lib/deferred-logger.js';
import { parseLogLevel } from '../../lib/log-level.js';
import type { Logger } from '../../lib/logger.js';
import { scrubSecrets } from '../../lib/scrub.js';
import type { Actor, Reply } from '../../pipeline/types.js';
import { auditChannelWitnessFromEnv } from '../slack/audit-witness.js';
import { type CliArgs, configFlag, ExitCode, parseCliArgs, parseExportWords, wantsJson } from './args.js';
import { createProgressBar } from './progress.js';
import { namespaceRefusal } from './user-namespace.js';

/** The alert sender over Slack's Web API (and Bolt), for `monitor --once` with `SLACK_BOT_TOKEN`. */
const loadSlackAlerts = () => import('../slack/alerts.js');

/** The monitor (sampler, rules, alert lifecycle, outbox, charts), for `monitor --once` only. */
const loadMonitorRuntime = () => import('../../escalation/runtime.js');

/** One tick of it and its answer. */
const loadMonitorOnce = () => import('../../escalation/once.js');

/** The leader's background jobs (limit expiry, the monitor's tick), which `monitor --once` runs once. */
const loadLeaderJobs = () => import('../../background/jobs.js');

// In args.ts so the entry point can use them before this module is loaded.
export { ExitCode } from './args.js';

/** Where the CLI reads and writes; the real process, or buffers in tests. */
export interface CliIo {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** stderr is a terminal: long actions (purge, undo) draw a progress bar there. */
  stderrIsTTY?: boolean;
  /** OS user name for the default actor `cli:<user>`. */
  osUser?: string;
  /** Host name, kept with the OS user on requests and approvals (one terminal is one person). */
  osHost?: string;
  /** This process's `/proc/self/uid_map` (tests); otherwise read from /proc. */
  readUidMap?: () => string;
  /** Logger override (tests); otherwise pino on stderr with the config's secrets scrubbed. */
  logger?: Logger;
  /** Called with the app before the command runs (the composition hook for middleware). */
  onApp?: (app: App) => void | Promise<void>;
  /**
   * How this command line was started, for the buttons hint (`queue-ops` when on PATH, else
   * `node bin/queue-ops.js`); asked only when a message has buttons. Default `queue-ops`.
   */
  program?: () => string;
}

/** The one JSON object `--json` prints. */
export interface CliJson {
  ok: boolean;
  message: Message;
  data: unknown;
  error?: { code: string; message: string; ref?: string; problems?: string[] };
}

/**
 * Runs one command line to completion and returns the exit code. Nothing is connected before the
 * config has been read and validated; every connection is closed before returning.
 */
export async function runCli(io: CliIo): Promise<number> {
  const json = wantsJson(io.argv);
  const configPath = resolve(io.cwd, configFlag(io.argv) ?? io.env.QUEUE_OPS_CONFIG ?? 'queue-ops.yml');
  // Before there is a config: usage, a wrong option and a refused config in the locale it asks for.
  const early: Locale = peekConfigFileLocale(configPath, io.env) ?? 'en';
  let args: CliArgs;
  try {
    args = parseCliArgs(io.argv, messages(early).cli);
  } catch (error) {
    if (!isOpsError(error)) throw error;
    return failEarly(io, json, error, early);
  }
  if (args.help) {
    io.stdout(`${messages(early).cli.usage}\n`);
    return ExitCode.Ok;
  }

  let config: Config;
  try {
    config = withPathsFrom(loadConfigFile(configPath, io.env), io.cwd);
  } catch (error) {
    if (!isOpsError(error)) throw error;
    const asked = error.params.locale;
    return failEarly(io, json, error, isLocale(asked) ? asked : early);
  }
  // From here on, whatever is said is said in the config's locale (a request's own wins inside it).
  return await inLocale(config.locale, () => runWithConfig(io, json, args, config));
}

/** The command, once its config is read and valid. */
async function runWithConfig(io: CliIo, json: boolean, args: CliArgs, config: Config): Promise<number> {
  const secrets = collectSecrets(config, io.env);
  if (io.logger) return await runWithLogger(io, json, args, config, secrets, io.logger);
  // pino on stderr, loaded only if a line is logged: most runs log nothing.
  const logger = createDeferredLogger({
    level: parseLogLevel(io.env.LOG_LEVEL, 'warn'),
    secrets,
    base: { name: 'queue-ops', via: 'cli' },
  });
  try {
    return await runWithLogger(io, json, args, config, secrets, logger);
  } finally {
    await logger.settled();
  }
}

/** The command with its logger. */
async function runWithLogger(
  io: CliIo,
  json: boolean,
  args: CliArgs,
  config: Config,
  secrets: string[],
  logger: Logger,
): Promise<number> {
  const runtime = await openRuntime(config, io, logger, json);
  if (typeof runtime === 'number') return runtime;
  const { app, full } = runtime;
  // Inside a user namespace the OS account and host are whatever the namespace says: nothing that
  // changes something or approves runs there (docs/security.md, "What the command line trusts").
  const namespaced = namespaceRefusal(args.words, io.readUidMap);
  if (namespaced) {
    try {
      await auditNamespaceRefusal(io, args, config, full, namespaced, logger);
    } finally {
      await app.close();
    }
    return failEarly(io, json, namespaced, config.locale);
  }
  // A read-only command (status, dlq, pending, …) answers first: an operator needs it most right
  // after a crash, and finishing a purge a killed process left can take a while. Anything else
  // runs once that purge is finished, as the bot does.
  const firstVerb = answersBeforeRecovery(app, args.words);
  try {
    if (full && !firstVerb) await full.recoverPurges();
    if (full) await reportInterrupted(io, full, logger, config.locale, secrets);
    await io.onApp?.(app);
    const actor = cliActor(io, args);
    if (args.words[0] === 'audit' && args.words[1] === 'export') {
      return await exportAudit(io, full, args, actor, secrets, config.locale);
    }
    if (args.words[0] === 'monitor') {
      return await monitorOnce(io, full, args, logger, secrets, config.locale);
    }
    const bar =
      io.stderrIsTTY && full ? createProgressBar({ write: io.stderr, locale: config.locale }) : undefined;
    if (bar && full) full.approvals.onProgress(bar.listener);
    const reply = await app.dispatcher
      .handle({
        actor,
        via: 'cli',
        words: args.words,
        locale: config.locale,
      })
      .finally(() => bar?.end());
    const saved = saveFiles(io, reply, config.locale);
    if (typeof saved === 'number') return saved;
    // Text shows the controls job names and failure reasons may carry; JSON escapes them itself.
    const out = json
      ? `${jsonText(toCliJson(reply, config.locale))}\n`
      : terminalText(reply.terminal ?? textOf(reply.message, config.locale, invocation(io)));
    io.stdout(scrubSecrets(out + (json ? '' : terminalText(saved)), secrets));
    return exitCodeOf(reply);
  } finally {
    if (full && firstVerb)
      await full.recoverPurges({
        onClaimed: (purge, kind) =>
          io.stderr(
            `${scrubSecrets(
              messages(config.locale).cli.finishingAfter(
                firstVerb,
                kind,
                purge.id,
                `${purge.system}/${purge.queue}`,
              ),
              secrets,
            )}\n`,
          ),
      });
    await app.close();
  }
}

/**
 * A command refused inside a user namespace goes into the audit trail as a guard's refusal does
 * (`denied`), with the account, host and uid map it claimed: an approval tried from a namespace
 * is worth knowing of. Before anything else of the command runs. A store that cannot take it
 * (the read-only runtime, a full disk) is logged, and the refusal stands all the same.
 */
async function auditNamespaceRefusal(
  io: CliIo,
  args: CliArgs,
  config: Config,
  full: QueueOps | undefined,
  refusal: OpsError,
  logger: Logger,
): Promise<void> {
  try {
    if (!full) throw new Error('the store is not open');
    const request = { actor: cliActor(io, args), via: 'cli' as const, words: args.words };
    const text = messages(config.locale).errors.describe(refusal);
    await full.audit.record(deniedEntry(config, request, args.words[0] ?? '', refusal, text));
  } catch (error) {
    logger.warn(
      { err: error, code: refusal.code },
      'a command refused inside a user namespace was not audited',
    );
  }
}

/** Who typed the command: the kernel's OS account and host, and `--user` when given. */
function cliActor(io: CliIo, args: CliArgs): Actor {
  const osUser = io.osUser ?? safeOsUser(io.env);
  const host = io.osHost ?? safeHostname();
  return args.user ? { id: args.user, osUser, host } : { id: `cli:${osUser}`, name: osUser, osUser, host };
}

/**
 * The verb of a command that only reads (its definition is not `mutating`), which answers before
 * purge recovery runs; undefined for everything else, `audit export` and `monitor` included.
 */
function answersBeforeRecovery(app: App, words: readonly string[]): string | undefined {
  const [verb, sub] = words;
  if (verb === undefined || verb === 'monitor' || (verb === 'audit' && sub === 'export')) return undefined;
  const command = app.commands.get(verb);
  return command && !command.mutating ? command.verb : undefined;
}

/**
 * The full runtime (store, audit, guards, approvals). When the bot's own store cannot be opened,
 * read-only commands still answer — an operator in an incident needs `status` most when things
 * are broken — and actions say why they cannot run.
 */
async function openRuntime(
  config: Config,
  io: CliIo,
  logger: Logger,
  json: boolean,
): Promise<{ app: App; full?: QueueOps } | number> {
  try {
    const full = await createQueueOps({
      config,
      env: io.env,
      logger,
      recoverLater: true,
      // The command line ends with the command: an outcome it cannot write is said, not kept.
      unwrittenOutcome: 'report',
      auditWitnesses: auditChannelWitnessFromEnv(io.env, config.slack.auditChannel, logger),
    });
    return { app: full, full };
  } catch (error) {
    if (
      !isOpsError(error) ||
      (error.code !== ErrorCode.StoreUnavailable && error.code !== ErrorCode.BadArgument)
    ) {
      if (isOpsError(error)) return failEarly(io, json, error, config.locale);
      throw error;
    }
    io.stderr(
      `${terminalText(
        `queue-ops: ${messages(config.locale).cli.storeUnavailable(messages(config.locale).errors.describe(error))}`,
      )}\n`,
    );
    return {
      app: createReadOnlyApp({
        config,
        env: io.env,
        logger,
        storeProblem: String(error.params.reason ?? error.params.message ?? error.code),
      }),
    };
  }
}

/**
 * Requests whose process died (a command line killed between approval and start, or mid-action)
 * are closed and reported here as the bot's sweep does: without a bot, the next command line is
 * the only one that can. Executions still renewing their lease are left alone, so a command line
 * never takes another's running action for dead; none is ever run again. One line each on stderr.
 */
async function reportInterrupted(
  io: CliIo,
  full: QueueOps,
  logger: Logger,
  locale: Locale,
  secrets: string[],
): Promise<void> {
  try {
    for (const request of await full.approvals.recoverInterrupted()) {
      const line = messages(locale).cli.recovered(
        request.id,
        request.action,
        request.target,
        request.error ?? '',
      );
      io.stderr(`${terminalText(scrubSecrets(line, secrets))}\n`);
    }
  } catch (error) {
    // The command asked for still runs; the next start tries again.
    logger.warn({ err: error }, 'could not check for interrupted requests');
  }
}

/** `audit export [--since ISO]`: JSON lines on stdout, one entry each; recorded in the trail too. */
async function exportAudit(
  io: CliIo,
  full: QueueOps | undefined,
  args: CliArgs,
  actor: Actor,
  secrets: string[],
  locale: Locale,
): Promise<number> {
  if (!full) {
    // The store's own failure is already on stderr; a script reading --json still gets an object.
    return failEarly(
      io,
      args.json,
      new OpsError(ErrorCode.NotSupported, {
        system: 'queue-ops',
        type: 'read-only',
        what: messages(locale).actions.exportNeedsStore,
      }),
      locale,
    );
  }
  let since: string | undefined;
  try {
    ({ since } = parseExportWords(args.words.slice(2), messages(locale)));
  } catch (error) {
    if (!isOpsError(error)) throw error;
    return failEarly(io, args.json, error, locale);
  }
  try {
    const count = await full.audit.export({ since }, (line) =>
      io.stdout(scrubSecrets(`${escapeC1(line)}\n`, secrets)),
    );
    await full.audit.record({
      actorId: actor.id,
      actorName: actor.name,
      via: 'cli',
      action: 'command.audit',
      target: 'export',
      params: { since: since ?? null, count, ...(actor.osUser ? { osUser: actor.osUser } : {}) },
      outcome: 'ok',
    });
    return ExitCode.Ok;
  } catch (error) {
    if (!isOpsError(error)) throw error;
    return failEarly(io, args.json, error, locale);
  }
}

/**
 * `monitor --once`: one tick of the monitor (cron, tests). Posts through the Web API when
 * `SLACK_BOT_TOKEN` is set (at `SLACK_API_URL` when given); otherwise messages wait in the outbox.
 */
async function monitorOnce(
  io: CliIo,
  full: QueueOps | undefined,
  args: CliArgs,
  logger: Logger,
  secrets: string[],
  locale: Locale,
): Promise<number> {
  const t = messages(locale).escalation;
  if (args.words.length !== 2 || args.words[1] !== '--once') {
    return failEarly(
      io,
      args.json,
      new OpsError(ErrorCode.UsageError, { message: t.monitor.onceOnly, usage: t.monitor.usage }),
      locale,
    );
  }
  if (!full) {
    return failEarly(
      io,
      args.json,
      new OpsError(ErrorCode.NotSupported, { system: 'queue-ops', type: 'read-only', what: t.needsStore }),
      locale,
    );
  }
  const token = io.env.SLACK_BOT_TOKEN;
  const [{ createEscalation }, { runMonitorOnce }, { runLeaderJobsOnce }] = await Promise.all([
    loadMonitorRuntime(),
    loadMonitorOnce(),
    loadLeaderJobs(),
  ]);
  // Loaded here, not at the top: Bolt's Web API client is slow to import and only this verb needs it.
  const { createAlertWebClient, createSlackSender } = await loadSlackAlerts();
  const slack = token
    ? createSlackSender(
        createAlertWebClient(token, io.env.SLACK_API_URL ? { apiUrl: io.env.SLACK_API_URL } : {}),
        logger,
        full.config.locale,
      )
    : undefined;
  try {
    const escalation = createEscalation({ runtime: full, logger, label: 'cli', ...(slack ? { slack } : {}) });
    const result = await runMonitorOnce({
      escalation,
      leaderJobsOnce: () => runLeaderJobsOnce({ escalation, limits: full.limits }, logger),
      store: full.store.escalation,
      locale: full.config.locale,
      hasToken: Boolean(token),
      hasChannel: Boolean(
        full.config.slack.incidentChannel || full.config.systems.some((s) => s.slack?.alertChannel),
      ),
    });
    const reply: Reply = { ...result, visibility: 'in_channel' };
    const out = args.json
      ? `${jsonText(toCliJson(reply, full.config.locale))}\n`
      : terminalText(reply.terminal ?? textOf(reply.message, full.config.locale, invocation(io)));
    io.stdout(scrubSecrets(out, secrets));
    return ExitCode.Ok;
  } catch (error) {
    if (!isOpsError(error)) throw error;
    return failEarly(io, args.json, error, locale);
  }
}

/**
 * Writes the files a command asked to be saved (`trend … --out chart.png`), relative to the
 * working directory. Returns the lines saying so, or the exit code when a file could not be written.
 */
function saveFiles(io: CliIo, reply: Reply, locale: Locale): string | number {
  const t = messages(locale).trend;
  let said = '';
  for (const file of reply.files ?? []) {
    if (file.saveAs === undefined) continue;
    const path = resolve(io.cwd, file.saveAs);
    try {
      writeFileSync(path, file.content);
    } catch (error) {
      io.stderr(
        `${terminalText(`queue-ops: ${t.writeFailed(path, (error as NodeJS.ErrnoException).code ?? String(error))}`)}\n`,
      );
      return ExitCode.Failed;
    }
    said += `${t.wrote(path, formatNumber(file.content.length, locale))}\n`;
  }
  return said;
}

/** 0 when ok; 2 for usage errors (bad words, unknown verb, bad argument); 1 otherwise. */
export function exitCodeOf(reply: Reply): number {
  if (reply.ok) return ExitCode.Ok;
  const code = reply.error?.code;
  if (code && code !== 'Internal' && isUsageError({ code, params: {} } as OpsError)) return ExitCode.Usage;
  return ExitCode.Failed;
}

export function toCliJson(reply: Reply, locale: Locale): CliJson {
  const out: CliJson = {
    ok: reply.ok,
    // `text` as a person reads it (no `&lt;`, no zero-width guards); `blocks` exactly as posted.
    message: { text: plain(reply.message.text), blocks: reply.message.blocks },
    data: reply.data ?? null,
  };
  if (!reply.ok && reply.error) {
    const t = messages(locale);
    const { code, params, ref } = reply.error;
    // An `Internal` error with a message is a failed action's stored reason; without, a crash.
    const message =
      code !== 'Internal'
        ? t.errors.describe({ code, params: params ?? {} })
        : typeof params?.message === 'string'
          ? params.message
          : t.common.somethingWentWrong(ref ?? '?');
    out.error = ref ? { code, message, ref } : { code, message };
  }
  return out;
}

/**
 * JSON as the command line prints it. `JSON.stringify` escapes C0 controls but leaves DEL, the C1
 * controls (U+009B is a CSI on some terminals) and U+2028/9 raw: escaped here too, so `--json`
 * read on a terminal is as inert as the text; the parsed value is the same.
 */
function jsonText(value: unknown): string {
  return escapeC1(JSON.stringify(value));
}

/** DEL, C1 controls and U+2028/9 in JSON text as `\\u` escapes (only JSON strings can hold them). */
function escapeC1(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * What a button's command starts with: the program as it was started, and the `--config` this
 * run was given (without it the command would read another config, or none).
 */
function invocation(io: CliIo): () => string {
  return () => {
    const config = configFlag(io.argv);
    const program = io.program?.() ?? 'queue-ops';
    return config === undefined ? program : `${program} --config ${shellWord(config)}`;
  };
}

/** The message as plain text, then the buttons with the command each one stands for. */
function textOf(message: Message, locale: Locale, program: () => string): string {
  const t = messages(locale).cli;
  const rendered = renderText(message);
  const lines = [rendered.text.replace(/\n+$/, '')];
  // The text already numbers the buttons; a terminal cannot click, so say what each one runs.
  const commands = rendered.buttons.flatMap((button) => {
    const words = wordsForAction(button.actionId, button.value);
    return words ? [t.button(button.index, `${program()} ${words.map(shellWord).join(' ')}`)] : [];
  });
  if (commands.length > 0) lines.push('', t.buttonsHeader, ...commands);
  return `${lines.join('\n')}\n`;
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A failure outside the dispatcher (bad flags, invalid config, `audit export` problems): every
 * problem on stderr, and with `--json` still exactly one JSON object on stdout so a script never
 * has to parse stderr. Exit 2 for usage and config errors, 1 for anything else.
 */
function failEarly(io: CliIo, json: boolean, error: OpsError, locale: Locale): number {
  const t = messages(locale);
  const problems = Array.isArray(error.params.problems) ? (error.params.problems as string[]) : undefined;
  if (error.code === ErrorCode.ConfigInvalid) {
    io.stderr(
      terminalText(
        `${t.cli.configInvalid(String(error.params.source))}\n${(problems ?? []).map((p) => `  ${p}\n`).join('')}`,
      ),
    );
  } else {
    io.stderr(`${terminalText(`queue-ops: ${t.errors.describe(error)}`)}\n`);
  }
  if (json) {
    const line = t.errors.describe(error);
    const body: CliJson = {
      ok: false,
      message: errorMessage(line),
      data: null,
      error: problems ? { code: error.code, message: line, problems } : { code: error.code, message: line },
    };
    io.stdout(`${jsonText(body)}\n`);
  }
  return isUsageError(error) || error.code === ErrorCode.ConfigInvalid ? ExitCode.Usage : ExitCode.Failed;
}

function safeHostname(): string | undefined {
  try {
    return hostname();
  } catch {
    return undefined;
  }
}

function safeOsUser(env: Record<string, string | undefined>): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.USERNAME ?? 'unknown';
  }
}
