const n = (value: number) => value.toLocaleString('en-US');

/** Megabytes with one decimal, or kB below that (with one decimal under 10 kB: 5.6 kB, not 6). */
const size = (bytes: number) => {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(1)} MB`;
  if (bytes < 10_000) return `${Math.max(0.1, Math.round(bytes / 100) / 10).toFixed(1)} kB`;
  return `${Math.round(bytes / 1000)} kB`;
};

const age = (seconds: number | null) => {
  if (seconds === null) return 'age unknown';
  if (seconds < 90) return `${seconds} s old`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min old`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h old`;
  return `${Math.round(seconds / 86_400)} d old`;
};

/** Purge, undo and their progress. */
export const purge = {
  purge: {
    usage:
      '/queue purge <system>/<queue> [waiting|failed|delayed|all] [--error <text>] [--name <name>] [--older-than <d>] [--newer-than <d>] [--keep <n>]',
    summary:
      'archive, then delete, the jobs of a queue in one state (default waiting), or those the filters match; failed --keep n keeps the newest n; undoable',
  },
  undo: {
    usage: '/queue undo <purge-request-id>',
    summary: 'restore a purge from its archive (same ids, data and place)',
  },
  states: 'waiting, failed, delayed or all',
  badState: (value: string) => `\`${value}\` is not a state to purge.`,
  nothingToPurge: (target: string, states: string) => `${target} has no ${states} jobs; nothing to purge.`,
  preview: (
    target: string,
    states: string,
    total: number,
    byState: string,
    sample: { name: string; ageSeconds: number | null }[],
    archivePath: string,
    estimatedBytes: number,
    id: string,
  ) =>
    `purge ${target} (${states}): ${n(total)} job${total === 1 ? '' : 's'} will be archived, then deleted` +
    `${byState ? ` (${byState})` : ''}. Next to go: ${
      sample.length ? sample.map((s) => `${s.name || '(no name)'} (${age(s.ageSeconds)})`).join(', ') : 'none'
    }. Archive: ${archivePath}, about ${size(estimatedBytes)}. Undo with \`/queue undo ${id}\`.`,
  byState: (state: string, count: number) => `${state} ${n(count)}`,
  unsupported: (state: string, why: string) => `${state}: ${why}`,
  undoPreview: (id: string, target: string, purged: number, archivePath: string) =>
    `undo ${id}: restore ${n(purged)} job${purged === 1 ? '' : 's'} of ${target} from ${archivePath}, with the same ids and place. A job whose id is in Redis again (for Celery: a message with its task id in any priority list of the queue, or held by a worker in \`unacked\`) is left as it is and counted, never put back twice.`,
  undoUnknown: 'no purge has that id',
  undoAlready: (by?: string) => `it was already undone${by ? ` (by ${by})` : ''}`,
  undoRunning: 'it is still running',
  undoInterrupted:
    'the undo stopped with its process; part of the archive may be back in Redis: check the queue before undoing again',
  undoResuming:
    'an undo of it was interrupted and goes on by itself, from where it stopped, once its Redis answers again (the bot tries every 30 s, the command line at its next run)',
  undoArchiveGone: (at: string) => `its archive was removed by the retention sweep at ${at}`,
  progress: (verb: string, done: number, total: number, secondsLeft: number | null) => {
    const percent = total > 0 ? Math.floor((done / total) * 100) : 100;
    return `${verb}… ${n(done)} of ${n(total)}, ${percent} %${secondsLeft === null ? '' : `, ~${Math.ceil(secondsLeft)} s left`}`;
  },
  /** Completes "`system` (type) cannot …" when the bot stops mid-purge. */
  stoppedForShutdown:
    'finish this purge while the bot shuts down; the next start finishes it from its archive',
  purgingVerb: 'Purging',
  restoringVerb: 'Restoring',
  expiringVerb: 'Expiring',
  /** The last words of a purge's preview: the approver approves these counts, no more. */
  previewExactly: (total: number) =>
    ` This is exactly what will run: at most these ${n(total)} job${total === 1 ? '' : 's'} (at most the count shown for each state, oldest first) go; jobs that arrive after this preview stay.`,
  resultPurged: (purged: number, archived: number, archivePath: string, id: string, newSincePreview = 0) =>
    `Purged ${n(purged)} of ${n(archived)} archived job${archived === 1 ? '' : 's'}${
      archived > purged ? ` (${n(archived - purged)} had been taken by workers and were left alone)` : ''
    }. Archive: ${archivePath}. Undo: \`/queue undo ${id}\`.${
      newSincePreview > 0
        ? ` ${n(newSincePreview)} job${newSincePreview === 1 ? '' : 's'} arrived after the preview and ${newSincePreview === 1 ? 'was' : 'were'} left.`
        : ''
    }`,
  resultRestored: (restored: number, purgeId: string, alreadyThere = 0) =>
    `Restored ${n(restored)} job${restored === 1 ? '' : 's'} of purge ${purgeId}.${
      alreadyThere > 0
        ? ` ${n(alreadyThere)} ${alreadyThere === 1 ? 'was' : 'were'} already in Redis under the same id and ${alreadyThere === 1 ? 'was' : 'were'} left as ${alreadyThere === 1 ? 'it was' : 'they were'}, not put back twice.`
        : ''
    }`,
  /** Why a state cannot be purged, by the backend's reason code. */
  why: (code: string) =>
    code === 'EtaTasksLiveInWorkers'
      ? 'Celery keeps ETA/countdown tasks inside the workers that prefetched them (and in `unacked`), not in a Redis list, so there is nothing delayed to purge'
      : code,
};
