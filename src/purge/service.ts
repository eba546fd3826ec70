import type { ExecutionContext } from '../approvals/service.js';
import type { PurgeSelection } from '../backends/job-filter.js';
import type { PurgePreview, PurgeState } from '../backends/queue-backend.js';
import type { ActionRequest, PurgeRecord } from '../store/store.js';
import { type PurgeResult, type PurgesDeps, purgesContext, type UndoResult } from './context.js';
import { executePurge, previewPurge } from './execute.js';
import { type RecoverOptions, recoverDeadRuns } from './restart-recovery.js';
import { sweepArchiveRetention } from './retention.js';
import { executeUndo, undoablePurge } from './undo.js';

export type { PurgeResult, PurgesDeps, UndoResult } from './context.js';

export interface Purges {
  /** The preview a purge request shows: exact counts, a sample, where it will be archived. */
  preview(
    system: string,
    queue: string,
    states: PurgeState[],
    purgeId: string,
    selection?: PurgeSelection,
  ): Promise<PurgePreview & { archivePath: string }>;
  /** The approved purge, run by the approvals service. */
  execute(request: ActionRequest, run: ExecutionContext): Promise<PurgeResult>;
  /** The purge an undo would restore, checked (state, archive kept, checksums). */
  undoable(purgeId: string): Promise<PurgeRecord>;
  undo(request: ActionRequest, run: ExecutionContext): Promise<UndoResult>;
  /**
   * Purges whose process died (SIGKILL, a crashed replica) are finished from their archive and
   * store cursor; the audit says so. Run at every start of the bot and of the command line.
   */
  recover(options?: RecoverOptions): Promise<PurgeRecord[]>;
  /** At most once a day (whoever runs first): archives older than `archive.retentionDays` go. */
  sweepRetention(): Promise<string[] | undefined>;
}

/**
 * The purge service: a purge's preview and execution (execute.ts), undo (undo.ts), finishing the
 * purges and undos of a dead process (restart-recovery.ts) and the archive's retention
 * (retention.ts), sharing one `PurgesContext` (context.ts). The engine and the archive's format
 * are loaded when a purge, an undo or the sweep first touches an archive.
 */
export function createPurges(deps: PurgesDeps): Purges {
  const ctx = purgesContext(deps);
  return {
    preview: (system, queue, states, purgeId, selection) =>
      previewPurge(ctx, system, queue, states, purgeId, selection),
    execute: (request, run) => executePurge(ctx, request, run),
    undoable: (purgeId) => undoablePurge(ctx, purgeId),
    undo: (request, run) => executeUndo(ctx, request, run),
    recover: (options) => recoverDeadRuns(ctx, options),
    sweepRetention: () => sweepArchiveRetention(ctx),
  };
}
