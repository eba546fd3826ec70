import type { CauseId, Diagnosis } from './types.js';

/**
 * The cause a runbook note names, from its words (English and the runbooks' Turkish): Pushizo's
 * "sağlayıcı yavaş/rate limit" is `slow-dependency`, "replika artır" is `no-capacity`, and so on.
 * The first match in this order wins.
 */
const NOTE_CAUSES: readonly [RegExp, CauseId][] = [
  [/yava[sş]|slow|rate.?limit|timeout|provider|sağlayıcı|endpoint/i, 'slow-dependency'],
  [/patlama|burst|spike|olay patlaması/i, 'task-burst'],
  [/stuck|takıl|uzun sürüyor|long.?running|stalled/i, 'stuck-tasks'],
  [/retry|yeniden deneme/i, 'retry-loop'],
  [/bellek|memory|oom/i, 'redis-memory'],
  [/replika|replica|eşzamanlılık|concurrency|kampanya|campaign|capacity|kapasite|scale/i, 'no-capacity'],
  [/worker.*(çök|crash|down)/i, 'no-workers'],
];

export function noteCause(note: string): CauseId | undefined {
  return NOTE_CAUSES.find(([pattern]) => pattern.test(note))?.[1];
}

/** How the live evidence stands to a queue's runbook note: agrees, points elsewhere, or shows nothing. */
export type NoteAgreement =
  | { queue: string; note: string; cause?: CauseId; agrees: 'yes' }
  | { queue: string; note: string; cause?: CauseId; agrees: 'elsewhere'; instead: CauseId }
  | { queue: string; note: string; cause?: CauseId; agrees: 'nothing' };

export function notesAgainst(
  notes: readonly { queue: string; note: string }[],
  diagnosis: Diagnosis,
): NoteAgreement[] {
  return notes.map(({ queue, note }) => {
    const cause = noteCause(note);
    const here = diagnosis.causes.filter((c) => c.queues.includes(queue) || c.queues.length === 0);
    const base = { queue, note, ...(cause ? { cause } : {}) };
    if (cause && here.some((c) => c.id === cause)) return { ...base, agrees: 'yes' };
    const top = here[0];
    if (top) return { ...base, agrees: 'elsewhere', instead: top.id };
    return { ...base, agrees: 'nothing' };
  });
}
