import { loadArchive, type PurgesContext, SYSTEM_ACTOR } from './context.js';

const DAY_MS = 86_400_000;

/**
 * At most once a day (whoever runs first): archives older than `archive.retentionDays` go, but
 * for one a purge or an undo is still using. Undefined when another run had the day's turn.
 */
export async function sweepArchiveRetention(ctx: PurgesContext): Promise<string[] | undefined> {
  const { deps } = ctx;
  const at = ctx.now();
  const due = await deps.store.claimPeriodic(
    'archive-retention',
    at.toISOString(),
    new Date(at.getTime() - DAY_MS).toISOString(),
  );
  if (!due) return undefined;
  const cutoff = new Date(at.getTime() - deps.config.archive.retentionDays * DAY_MS);
  const { archivesOlderThan, removeArchive } = await loadArchive();
  const removed: string[] = [];
  for (const name of await archivesOlderThan(deps.config.archive.dir, cutoff)) {
    const purge = await deps.store.getPurge(name);
    if (purge && (purge.state === 'archiving' || purge.state === 'undoing')) continue;
    await removeArchive(deps.config.archive.dir, name);
    if (purge) await deps.store.updatePurge(name, [purge.state], { archiveRemovedAt: at.toISOString() });
    removed.push(name);
  }
  // Audited when it removed something; a daily run that found nothing to remove is only logged.
  if (removed.length === 0) {
    deps.logger?.debug({ cutoff: cutoff.toISOString() }, 'archive retention: nothing to remove');
    return removed;
  }
  await deps.audit.record({
    ...SYSTEM_ACTOR,
    action: 'archive.retention',
    target: deps.config.archive.dir,
    params: { retentionDays: deps.config.archive.retentionDays, removed },
    outcome: 'ok',
  });
  return removed;
}
