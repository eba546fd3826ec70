import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { wordsForAction } from '../../blocks/action-ids.js';
import type { Message } from '../../blocks/message.js';
import { renderText, type TextButton } from '../../blocks/render-text.js';
import { isOpsError, terminalText } from '../../errors.js';
import { type Locale, messages } from '../../i18n/index.js';
import type { Logger } from '../../lib/logger.js';
import { tokenize } from '../../pipeline/parse.js';
import { newRef } from '../../pipeline/ref.js';
import type { Reply, Request } from '../../pipeline/types.js';

/** The part of the dispatcher the console needs. */
export interface ConsoleDispatcher {
  handle(request: Request): Promise<Reply>;
}

/** A button of the last message, numbered from 1 as the user types it. */
export type ConsoleButton = TextButton;

export interface ConsoleOptions {
  dispatcher: ConsoleDispatcher;
  /** The Slack user id the console acts as (`:user` changes it). */
  user: string;
  locale?: Locale;
  logger?: Logger;
  /** Where files that come with an answer (a `trend` chart) are written; without it they are dropped. */
  filesDir?: string;
}

/** What one typed line produced. */
export interface ConsoleOutcome {
  /** Text to print (may be empty). */
  output: string;
  quit: boolean;
  /** The dispatcher's answer, when the line was a command or a button. */
  reply?: Reply;
}

/** A console session: the current user and the last message's buttons. */
export interface ConsoleSession {
  readonly user: string;
  readonly buttons: readonly ConsoleButton[];
  /** Handles one typed line. Never throws: bad input is a one-line answer. */
  handleLine(line: string): Promise<ConsoleOutcome>;
}

const QUIT = new Set(['quit', 'exit', ':q', ':quit', '\\q']);

/**
 * The demo console's behaviour without any terminal: `/queue status`, `status`, a button number,
 * `:user U0BOB`, `help`, `quit`. Every command and every button press becomes a `Request` through
 * the same dispatcher as Slack and the CLI.
 */
export function createConsoleSession(options: ConsoleOptions): ConsoleSession {
  const locale = options.locale ?? 'en';
  const t = messages(locale);
  let user = options.user;
  let buttons: ConsoleButton[] = [];

  async function dispatch(words: string[], action?: Request['action']): Promise<ConsoleOutcome> {
    let reply: Reply;
    try {
      reply = await options.dispatcher.handle({
        actor: { id: user },
        via: 'console',
        words,
        action,
        locale,
      });
    } catch (error) {
      // The dispatcher promises never to reject; if it does anyway, still no stack trace here.
      const ref = newRef();
      options.logger?.error({ err: error, ref }, 'console dispatch failed');
      return { output: t.common.somethingWentWrong(ref), quit: false };
    }
    const rendered = show(reply.message);
    if (reply.ok || rendered.buttons.length > 0) buttons = rendered.buttons;
    // A terminal text (the whole timeline as Markdown) is what a terminal shows, as on the command
    // line; the Slack message beside it may point at a file sent elsewhere.
    let output = reply.terminal !== undefined ? reply.terminal.replace(/\n+$/, '') : rendered.text;
    for (const file of reply.files ?? []) {
      if (!options.filesDir) continue;
      const path = join(options.filesDir, basename(file.filename));
      writeFileSync(path, file.content);
      output += `\n${t.demo.fileWritten(path)}`;
    }
    return { output, quit: false, reply };
  }

  /** renderText numbers the buttons in the text itself (`[1] Refresh`); pressing uses the same numbers. */
  function show(message: Message): { text: string; buttons: ConsoleButton[] } {
    const rendered = renderText(message);
    return { text: rendered.text.replace(/\n+$/, ''), buttons: rendered.buttons };
  }

  async function press(index: number): Promise<ConsoleOutcome> {
    if (buttons.length === 0) return { output: t.demo.noButtons, quit: false };
    const button = buttons.find((b) => b.index === index);
    if (!button) return { output: t.demo.noSuchButton(index, buttons.length), quit: false };
    const words = wordsForAction(button.actionId, button.value);
    if (!words) return { output: t.demo.unknownButton(button.label), quit: false };
    return dispatch(words, { actionId: button.actionId, value: button.value });
  }

  async function handleLine(line: string): Promise<ConsoleOutcome> {
    const trimmed = line.trim();
    if (trimmed === '') return { output: '', quit: false };
    if (QUIT.has(trimmed.toLowerCase())) return { output: '', quit: true };
    if (/^\d+$/.test(trimmed)) return press(Number(trimmed));
    const userSwitch = /^:user(?:\s+(\S*))?\s*$/i.exec(trimmed);
    if (userSwitch) {
      const id = userSwitch[1] ?? '';
      if (!/^[UW][A-Z0-9]+$/.test(id)) return { output: t.demo.badUser(id), quit: false };
      user = id;
      return { output: t.demo.userSwitched(id), quit: false };
    }
    let words: string[];
    try {
      words = tokenize(trimmed);
    } catch (error) {
      if (isOpsError(error)) return { output: t.errors.describe(error), quit: false };
      throw error;
    }
    if (words[0]?.toLowerCase() === '/queue') words = words.slice(1);
    const isHelp = words.length === 1 && (words[0] === 'help' || words[0] === '?');
    const outcome = await dispatch(isHelp ? ['help'] : words);
    if (isHelp) outcome.output = `${outcome.output}\n\n${t.demo.consoleHelp}`;
    return outcome;
  }

  return {
    get user() {
      return user;
    },
    get buttons() {
      return buttons;
    },
    handleLine,
  };
}

/** Prints each line's answer after an echo of the line; returns how many replies were not ok. */
export async function runLines(
  session: ConsoleSession,
  lines: Iterable<string> | AsyncIterable<string>,
  write: (text: string) => void,
): Promise<{ failures: number }> {
  let failures = 0;
  for await (const line of lines) {
    if (line.trim() === '') continue;
    write(`> ${line.trim()}\n`);
    const outcome = await session.handleLine(line);
    if (outcome.reply && !outcome.reply.ok) failures++;
    if (outcome.output) write(`${terminalText(outcome.output)}\n\n`);
    if (outcome.quit) break;
  }
  return { failures };
}

/** The interactive prompt over a terminal; resolves on `quit` or end of input. */
export async function runInteractive(
  session: ConsoleSession,
  io: { input: Readable; output: Writable; locale?: Locale },
): Promise<void> {
  const t = messages(io.locale ?? 'en').demo;
  const rl = createInterface({ input: io.input, output: io.output, terminal: true, historySize: 200 });
  // Ctrl-C at the prompt leaves like quit, so the caller still stops what it started.
  rl.on('SIGINT', () => rl.close());
  try {
    rl.setPrompt(t.prompt(session.user));
    rl.prompt();
    for await (const line of rl) {
      const outcome = await session.handleLine(line);
      if (outcome.output) io.output.write(`${terminalText(outcome.output)}\n\n`);
      if (outcome.quit) break;
      rl.setPrompt(t.prompt(session.user));
      rl.prompt();
    }
  } finally {
    rl.close();
  }
}
