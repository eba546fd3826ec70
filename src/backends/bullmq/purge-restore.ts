import type { Redis } from 'ioredis';
import { runScript } from '../lua.js';
import type { QueuePurger, UndoStep } from '../queue-backend.js';
import {
  MARKER_MOVED,
  readUndoProgress,
  undoMarkerKey,
  undoStepArgs,
  undoTakenOver,
} from '../undo-marker.js';
import { PURGE_EXISTING, PURGE_RESTORE } from './scripts.js';

/** Restores per script call: each line is a whole job, so a few hundred keep a call short. */
const RESTORE_BATCH = 200;

/** Existence checks per PURGE_EXISTING call. */
const CONFLICTS_CALL = 1000;

/**
 * Undo's side of the BullMQ purger (purge.ts): which archived jobs exist again, and archived
 * lines put back, each job with its hash and in its place, with the undo's marker moved in the
 * same script call.
 */
export function createBullmqRestorer(options: {
  client: Redis;
  prefix: string;
  queue: string;
}): Pick<QueuePurger, 'conflicts' | 'restore' | 'undoProgress' | 'clearUndoProgress'> {
  const { client, prefix } = options;
  const base = `${prefix}:${options.queue}:`;
  return {
    conflicts: (lines) => jobsExisting(client, base, lines),
    restore: (lines, step) => restoreJobs(client, prefix, base, lines, step),
    undoProgress: (purgeId) => readUndoProgress(client, undoMarkerKey(purgeId, prefix)),
    clearUndoProgress: async (purgeId) => {
      await client.del(undoMarkerKey(purgeId, prefix));
    },
  };
}

/** The ids of the archived lines' jobs whose hash exists again. */
async function jobsExisting(client: Redis, base: string, lines: string[]): Promise<string[]> {
  const ids = lines.map((line) => (JSON.parse(line) as { id: string }).id);
  const out: string[] = [];
  for (let i = 0; i < ids.length; i += CONFLICTS_CALL) {
    // The queue's meta key is not read: it routes the call to the master of the queue's
    // slot on Redis Cluster (a script without keys goes to any node).
    const found = (await runScript(
      client,
      PURGE_EXISTING,
      [`${base}meta`],
      [base, ...ids.slice(i, i + CONFLICTS_CALL)],
    )) as string[];
    out.push(...found);
  }
  return out;
}

/** Archived lines put back a few hundred a call; a job whose id exists again is left as it is. */
async function restoreJobs(
  client: Redis,
  prefix: string,
  base: string,
  lines: string[],
  step: UndoStep | undefined,
): Promise<{ restored: number; existing: string[] }> {
  // Beside the queue's keys on Redis Cluster (the prefix holds its {hash-tag}); without a step,
  // the script neither reads nor writes it.
  const marker = undoMarkerKey(step?.purgeId ?? '-', prefix);
  let restored = 0;
  const existing: string[] = [];
  for (let i = 0; i < lines.length; i += RESTORE_BATCH) {
    const batch = lines.slice(i, i + RESTORE_BATCH);
    // Each call moves the marker past its own lines: a call cut short wrote nothing.
    const at = step && { ...step, from: step.from + i, restoredBefore: step.restoredBefore + restored };
    const [count, ...ids] = (await runScript(
      client,
      PURGE_RESTORE,
      [marker],
      [...undoStepArgs(at, batch.length), base, ...batch],
    )) as [number, ...string[]];
    if (Number(count) === MARKER_MOVED && at) throw undoTakenOver(at);
    restored += Number(count);
    existing.push(...ids);
  }
  return { restored, existing };
}
