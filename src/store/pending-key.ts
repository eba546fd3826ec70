import { createHash } from 'node:crypto';
import { canonicalJson } from './audit-hash.js';
import type { ActionRequest } from './store.js';

/** Params a request's preview fills in (commands/retry.ts, commands/purge.ts), left out of its key. */
const PREVIEW_PINNED = ['jobIds', 'previewedAt', 'caps'] as const;

/**
 * What makes two requests "the same" while they wait: action, target, channel (none for the
 * command line and the Home tab) and params, whatever the order their keys were written in. Taken
 * over the params as they are stored (through JSON), so a request compares equal to its own row.
 * A sha256, so the unique index stays small however long a reason is.
 */
export function pendingKeyOf(
  request: Pick<ActionRequest, 'action' | 'target' | 'channel' | 'params'>,
): string {
  const stored = JSON.parse(JSON.stringify(request.params ?? {})) as Record<string, unknown>;
  // What a preview pinned (a retry's job ids, a purge's counts) says how much, not what about:
  // `retry … all` asked again after more failures arrived is still the same request.
  for (const key of PREVIEW_PINNED) delete stored[key];
  const text = canonicalJson([request.action, request.target, request.channel ?? null, stored]);
  return createHash('sha256').update(text).digest('hex');
}
