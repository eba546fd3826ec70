import type { Approvals, ExecutionContext } from '../approvals/service.js';
import type { Audit } from '../audit/audit.js';
import type { BackendRegistry } from '../backends/registry.js';
import type { Message } from '../blocks/message.js';
import type { ActionName, Config, Role } from '../config/schema.js';
import type { ErrorCode, ErrorParams } from '../errors.js';
import type { AlertService } from '../escalation/alerts.js';
import type { Locale } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { Limits } from '../limits/service.js';
import type { Purges } from '../purge/service.js';
import type { ScalerRegistry } from '../scalers/index.js';
import type { ActionRequest, Actor, Store, Via } from '../store/store.js';

// Who acted and through what are stored with every request and audit entry: defined with them.
export type { Actor, Via };

/** One thing a user asked for, whatever transport it came through. */
export interface Request {
  actor: Actor;
  via: Via;
  /** Slack channel id; undefined on the command line. */
  channel?: string;
  /** The words after `/queue`. */
  words: string[];
  /** Present when a button produced this request. */
  action?: { actionId: string; value: string; messageTs?: string };
  /**
   * `home`: a click on the App Home tab, which has no channel. Slack renders that view only for
   * the user it was published to, and it only ever holds that user's Approve/Deny buttons.
   */
  surface?: 'home';
  locale: Locale;
}

/** What the user sees, plus the machine-readable result for `--json`. */
export interface Reply {
  ok: boolean;
  message: Message;
  /** The command's data for `--json` (shape documented per verb in README). */
  data?: unknown;
  /** Who sees it in Slack. Denials and errors are ephemeral. */
  visibility: 'ephemeral' | 'in_channel';
  /** A button's answer replaces the message that held the button. */
  replaceOriginal?: boolean;
  /** The terminal's text in place of the rendered blocks (e.g. Markdown for a postmortem). */
  terminal?: string;
  /**
   * Files that go with the answer (a chart). Slack uploads them after the message; the command
   * line writes those with `saveAs`. Never in `--json`.
   */
  files?: ReplyFile[];
  /** Set when ok is false. */
  error?: { code: ErrorCode | 'Internal'; params?: ErrorParams; ref?: string };
  /**
   * Facts of what the command did that its audit entry keeps as `params.result` (a count, a
   * system, an id; never job data), for the timeline: `ack all zeus` acknowledged how many.
   */
  audit?: Record<string, string | number>;
}

/** A file for the transport to deliver: uploaded in Slack, written to `saveAs` on the command line. */
export interface ReplyFile {
  filename: string;
  title: string;
  content: Buffer;
  /** Slack: upload into this thread (an alert's) rather than the channel. */
  threadTs?: string;
  /**
   * Slack: a file for this user alone (an ephemeral answer's), sent to their direct messages
   * with the bot instead of the channel, where everyone would see it.
   */
  privateTo?: string;
  /** Command line: the path given with `--out`. */
  saveAs?: string;
}

/** What every command receives; built once in the composition root. */
export interface CommandContext {
  config: Config;
  backends: BackendRegistry;
  now: () => Date;
  /** The request's child logger (set by the dispatcher for each request). */
  logger?: Logger;
  /** Two-person approval over the store; absent in read-only setups. */
  approvals?: Approvals;
  /** The hash-chained audit trail; absent in read-only setups. */
  audit?: Audit;
  /** Who holds which role now (admins see requests and entries from every channel). */
  roles?: { has(userId: string, role: Role): Promise<boolean> };
  /** Open alerts, ack and snooze; absent in read-only setups. */
  alerts?: AlertService;
  /** The bot's store, read-only use (the incident timeline, the Home tab); absent in read-only setups. */
  store?: Pick<Store, 'listAudit' | 'escalation'> & Partial<Pick<Store, 'activeLimits'>>;
  /** The configured worker groups (`workers:`) and how each is scaled. */
  scalers?: ScalerRegistry;
  /** Purge previews, undo checks; absent in read-only setups. */
  purges?: Purges;
  /**
   * Runs these words as the same person, in the same channel and through the same transport, as if
   * they had typed them: the whole dispatcher again (guards, audit, policy, approval). Set by the
   * dispatcher for each request (`why --fix`, what a fix button sends).
   */
  redispatch?: (words: string[]) => Promise<Reply>;
}

/** What an approved action may use when it runs; built once by the composition root. */
export interface ActionDeps {
  config: Config;
  backends: BackendRegistry;
  /** The configured worker groups and how each is scaled. */
  scalers?: ScalerRegistry;
  /** Purge, undo and their archives; absent in read-only setups, where nothing is approved. */
  purges?: Purges;
  /** Rate limits and concurrency queue-ops sets, remembers and lifts (`rate-limit`, `concurrency`). */
  limits?: Limits;
  now: () => Date;
}

/** How a mutating command's approved request runs, next to the parsing and preview that made it. */
export interface CommandAction {
  /** The policy it runs under (`policies.<name>`); the stored request carries this name. */
  name: ActionName;
  /**
   * Runs the approved request with its parameters read back from the store. Those are data, not a
   * promise: bounds and targets are checked again against the config and Redis of now.
   */
  execute(request: ActionRequest, run: ExecutionContext, deps: ActionDeps): Promise<Record<string, unknown>>;
}

export interface CommandDefinition {
  verb: string;
  /** Mutating commands only run in `slack.allowedChannels` and go through policy. */
  mutating: boolean;
  /**
   * `false`: a mutating command the rate limit does not count (`ack`, `snooze`: answering an alert
   * storm must not stop at the eleventh alert). Default: counted when mutating.
   */
  rateLimited?: boolean;
  run(ctx: CommandContext, args: string[], request: Request): Promise<Reply>;
  /** Mutating commands that go through approval: what runs once the request is approved. */
  action?: CommandAction;
  /** Its line in `/queue help`; the read path's verbs are described by the help builder itself. */
  describe?(locale: Locale): { usage: string; summary: string };
}

/** Verb → command. Later features (pause, approve, audit…) `register` theirs at composition. */
export interface CommandRegistry {
  /** The command for a verb, or `UnknownVerb` naming the valid verbs and the likely one. */
  resolve(verb: string): CommandDefinition;
  get(verb: string): CommandDefinition | undefined;
  /** Verbs in registration order. */
  verbs(): string[];
  /** Commands in registration order. */
  all(): CommandDefinition[];
  /** Adds a command; registering a verb twice is a programming error. */
  register(command: CommandDefinition): void;
}
