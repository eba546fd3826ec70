import type { BullmqJobView } from '../backends/bullmq/job.js';
import type { CeleryTaskView } from '../backends/celery/task.js';
import type { QueueContext } from '../config/queue-context.js';
import { type Locale, messages } from '../i18n/index.js';
import { ActionId, jobRef } from './action-ids.js';
import { formatDuration, formatNumber, formatRelative, formatUtc } from './format.js';
import { actions, button, context, errorLine, header, inCode, inline, section } from './kit.js';
import type { KnownBlock, Message } from './message.js';
import { queueContextLine } from './queue-context.js';

export interface BullmqJobMessageView {
  system: string;
  queue: string;
  job: BullmqJobView;
  generatedAt: Date;
  /** Who owns the queue and its runbook, from the config. */
  context?: QueueContext;
}

const STACK_LINE_CHARS = 200;

/**
 * A stack frame cut to `max` characters where it matters least: the middle of its path, so the
 * function, the file name and its line and column stay (`at send (/srv/app/…/lib/send.js:42:7)`);
 * a frame cut at its end lost exactly those. Other lines are left to `errorLine`'s cut.
 */
export function shortFrame(line: string, max: number): string {
  const text = line.trim();
  if (text.length <= max) return text;
  const frame = /^(at (?:.*? \()?)(.+?)(:\d+:\d+\)?)$/.exec(text);
  if (!frame) return text;
  const [, head = '', path = '', tail = ''] = frame;
  const room = max - head.length - tail.length - 1;
  if (room < 12) return text;
  const keepEnd = Math.ceil((room * 2) / 3);
  return `${head}${path.slice(0, room - keepEnd)}…${path.slice(path.length - keepEnd)}${tail}`;
}

/** The command a job's view is one click (or one line) away from: for dlq, stuck and alerts. */
export function jobCommand(target: string, id: string): string {
  return `/queue job ${target} ${id}`;
}

/**
 * One BullMQ job: where it is, attempts, times, error and stack, flow, and the buttons its state
 * allows (Retry when failed, Fail when active); each button runs the typed command, through the
 * same guards and approvals. Never `data` or `returnvalue`.
 */
export function bullmqJobMessage(view: BullmqJobMessageView, locale: Locale): Message {
  const t = messages(locale).job;
  const { job, generatedAt } = view;
  const target = `${view.system}/${view.queue}`;
  const at = (ms: number) => formatUtc(ms, locale);
  const duration = (ms: number | null) => (ms === null ? null : formatDuration(ms / 1000, locale));
  const state = t.states[job.state] ?? job.state;

  const facts: string[] = [t.stateLine(state, inCode(job.name || '?', 80))];
  if (job.position !== null) facts.push(t.position(formatNumber(job.position, locale)));
  if (job.searched !== null && job.state === 'unknown')
    facts.push(t.searched(formatNumber(job.searched, locale)));
  if (job.dueAt !== null) facts.push(t.due(at(job.dueAt), formatRelative(job.dueAt, generatedAt, locale)));
  if (job.priority !== null) facts.push(t.priority(job.priority));
  facts.push(t.attempts(job.attempts.made, job.attempts.allowed));
  if (job.lock) facts.push(job.lock.held ? t.lockHeld(duration(job.lock.ttlMs)) : t.lockLost);
  if (job.progress !== null && job.progress !== undefined)
    facts.push(
      t.progress(inline(typeof job.progress === 'string' ? job.progress : JSON.stringify(job.progress), 80)),
    );
  if (job.parent) facts.push(t.parent(inCode(job.parent.queue, 80), inCode(job.parent.id, 80)));
  const { children } = job;
  if (children.pending + children.processed + children.failed > 0) {
    facts.push(t.children(children.pending, children.processed, children.failed));
    if (children.keys.length > 0)
      facts.push(t.childKeys(children.keys.map((key) => `\`${inCode(key, 80)}\``).join(', ')));
  }
  if (job.repeatKey) facts.push(t.repeat(inCode(job.repeatKey, 120)));

  const { added, processed, finished } = job.timestamps;
  const times: string[] = [];
  if (added !== null) times.push(t.added(at(added)));
  if (processed !== null) times.push(t.processed(at(processed), duration(job.waitMs)));
  if (finished !== null) times.push(t.finished(at(finished), duration(job.runMs)));

  const blocks: KnownBlock[] = [
    header(t.title(target, job.id)),
    context(messages(locale).workers.updated(formatUtc(generatedAt, locale))),
    ...ownerBlocks(view.context, locale),
    section(facts.join('\n')),
  ];
  if (times.length > 0) blocks.push(section([t.timesTitle, ...times].join('\n')));
  if (job.failedReason) blocks.push(section(`${t.errorTitle}\n${errorLine(job.failedReason, 500)}`));
  if (job.stack.length > 0)
    blocks.push(
      section(
        `${t.stackTitle}\n\`\`\`${job.stack.map((line) => errorLine(shortFrame(line.replace(/`/g, "'"), STACK_LINE_CHARS), STACK_LINE_CHARS + 40)).join('\n')}\`\`\``,
      ),
    );
  blocks.push(context(t.dataNote));

  const ref = jobRef(target, job.id);
  if (ref) {
    const buttons = [];
    if (job.state === 'failed') buttons.push(button(t.retry, ActionId.JobRetry, ref, true));
    if (job.state === 'active') buttons.push(button(t.fail, ActionId.JobFail, ref));
    buttons.push(button(t.refresh, ActionId.JobRefresh, ref));
    blocks.push(actions(buttons));
  } else {
    blocks.push(context(t.view(inCode(jobCommand(target, job.id), 300))));
  }
  return { text: t.fallback(inline(target, 120), inline(job.id, 80), state), blocks };
}

export interface CeleryTaskMessageView {
  system: string;
  task: CeleryTaskView;
  generatedAt: Date;
  /** Who owns the task's queue and its runbook, from the config. */
  context?: QueueContext;
}

/** The owner, runbook and notes of the job's queue, as a context line, when the config has any. */
function ownerBlocks(queueContext: QueueContext | undefined, locale: Locale): KnownBlock[] {
  const line = queueContextLine(queueContext, locale);
  return line ? [context(line)] : [];
}

/** The queue a Celery task is in or came from: its list, else what its stored result says. */
export function celeryTaskQueue(task: CeleryTaskView): string | null {
  return task.where?.queue ?? task.result?.queue ?? null;
}

/**
 * One Celery task: a worker's word on it, its place in a queue, its stored result (status, when,
 * retries, the error and the traceback's last lines). Buttons: Retry (failed), Revoke (queued or
 * running), Refresh. Never its arguments or its return value.
 */
export function celeryTaskMessage(view: CeleryTaskMessageView, locale: Locale): Message {
  const t = messages(locale).job;
  const { task, system } = view;
  const state = t.taskStates[task.state] ?? task.state;
  const facts: string[] = [t.stateLine(state, inCode(task.name ?? '?', 120))];
  if (task.where)
    facts.push(
      t.queuedAt(
        inCode(task.where.queue, 80),
        task.where.priority,
        formatNumber(task.where.position, locale),
      ),
    );
  if (task.worker) facts.push(t.onWorker(inCode(task.worker, 120)));
  const { result } = task;
  if (result) {
    const done = result.dateDone
      ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(result.dateDone) ? result.dateDone : `${result.dateDone}Z`)
      : Number.NaN;
    facts.push(
      t.resultLine(
        inline(result.status, 20),
        Number.isNaN(done) ? null : formatUtc(done, locale),
        result.retries,
      ),
    );
  }
  const blocks: KnownBlock[] = [
    header(t.taskTitle(system, task.id)),
    context(messages(locale).workers.updated(formatUtc(view.generatedAt, locale))),
    ...ownerBlocks(view.context, locale),
    section(facts.join('\n')),
  ];
  if (result?.error) blocks.push(section(`${t.errorTitle}\n${errorLine(result.error, 500)}`));
  if (result && result.traceback.length > 0)
    blocks.push(
      section(
        `${t.tracebackTitle}\n\`\`\`${result.traceback.map((line) => errorLine(line.replace(/`/g, "'"), STACK_LINE_CHARS)).join('\n')}\`\`\``,
      ),
    );
  blocks.push(context(t.argsNote));
  const queue = celeryTaskQueue(task);
  const buttons = [];
  const retryRef = queue && task.state === 'FAILURE' ? jobRef(`${system}/${queue}`, task.id) : undefined;
  if (retryRef) buttons.push(button(t.retry, ActionId.JobRetry, retryRef, true));
  const running = ['queued', 'unacked', 'active', 'reserved', 'scheduled', 'STARTED', 'RETRY'].includes(
    task.state,
  );
  const ownRef = jobRef(`${system}/`, task.id);
  if (running && ownRef) buttons.push(button(t.revoke, ActionId.JobRevoke, ownRef));
  if (ownRef) buttons.push(button(t.refresh, ActionId.JobRefresh, ownRef));
  if (buttons.length > 0) blocks.push(actions(buttons));
  return { text: t.fallback(inline(system, 120), inline(task.id, 80), state), blocks };
}
