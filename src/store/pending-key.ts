import { createHash } from 'node:crypto';
import { canonicalJson } from './audit-hash.js';
import type { ActionRequest } from './store.js';

/**
 * What makes two requests "the same" while they wait: action, target, channel (none for the
 * command line and the Home tab) and params, whatever the order their keys were written in. Taken
 * over the params as they are stored (through JSON), so a request compares equal to its own row.
 * A sha256, so the unique index stays small however long a reason is.
 */
export function pendingKeyOf(
  request: Pick<ActionRequest, 'action' | 'target' | 'channel' | 'params'>,
): string {
  const stored = JSON.parse(JSON.stringify(request.params ?? {})) as unknown;
  const text = canonicalJson([request.action, request.target, request.channel ?? null, stored]);
  return createHash('sha256').update(text).digest('hex');
}
