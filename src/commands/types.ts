import type { Approvals } from '../approvals/service.js';
import type { Audit } from '../audit/audit.js';
import type { QueueBackend } from '../backends/queue-backend.js';
import type { Message } from '../blocks/message.js';
import type { Config, Role } from '../config/schema.js';
import type { ErrorCode, ErrorParams } from '../errors.js';
import type { AlertService } from '../escalation/alerts.js';
import type { Locale } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { Purges } from '../purge/service.js';
import type { ScalerRegistry } from '../scalers/index.js';

export type Via = 'slack' | 'cli' | 'console';

export interface Actor {
  /** Slack user id, or `cli:<os user>` on the command line unless `--user` is given. */
  id: string;
  /** Display name when known (Slack user name, OS user). */
  name?: string;
  /**
   * On the command line, the OS user who typed it. `--user` is not authenticated, so the audit
   * keeps who really ran the command next to the Slack id they claimed.
   */
  osUser?: string;
  /** On the command line, the host it was typed on (with `osUser`, who really typed it). */
  host?: string;
}

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
  /** Set when ok is false. */
  error?: { code: ErrorCode | 'Internal'; params?: ErrorParams; ref?: string };
}

/** Resolves names from config to live backends. */
export interface BackendRegistry {
  names(): string[];
  get(name: string): QueueBackend | undefined;
  all(): QueueBackend[];
}

/** What every command receives; built once in the composition root. */
export interface CommandContext {
  config: Config;
  backends: BackendRegistry;
  now: () => Date;
  /** The request's child logger (set by the dispatcher for each request). */
  logger?: Logger;
  /** Two-person approval over the store (issue 3); absent in read-only setups. */
  approvals?: Approvals;
  /** The hash-chained audit trail (issue 3); absent in read-only setups. */
  audit?: Audit;
  /** Who holds which role now (admins see requests and entries from every channel). */
  roles?: { has(userId: string, role: Role): Promise<boolean> };
  /** Open alerts, ack and snooze (issue 8); absent in read-only setups. */
  alerts?: AlertService;
  /** The configured worker groups (`workers:`) and how each is scaled (issue 9). */
  scalers?: ScalerRegistry;
  /** Purge previews, undo checks (issue 7); absent in read-only setups. */
  purges?: Purges;
}

export interface CommandDefinition {
  verb: string;
  /** Mutating commands only run in `slack.allowedChannels` and go through policy. */
  mutating: boolean;
  run(ctx: CommandContext, args: string[], request: Request): Promise<Reply>;
  /** Its line in `/queue help`; the read path's verbs are described by the help builder itself. */
  describe?(locale: Locale): { usage: string; summary: string };
}
