import { createHash } from 'node:crypto';
import type { AuditEntry } from '../store/store.js';

/**
 * JSON with object keys sorted at every depth and `undefined` members left out, so the same entry
 * always hashes the same whichever database stored it and in whatever order its keys came back.
 */
export function canonicalJson(value: unknown): string {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    return canonicalJson((value as { toJSON: () => unknown }).toJSON());
  }
  if (value === null || typeof value !== 'object') {
    // JSON.stringify gives undefined for undefined, functions and symbols; JSON arrays say null there.
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined && typeof record[key] !== 'function')
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

/** `sha256(prevHash + canonicalJson(entry without hash))`, hex. */
export function auditEntryHash(entry: Omit<AuditEntry, 'hash'>): string {
  const { hash: _ignored, ...rest } = entry as AuditEntry;
  return createHash('sha256')
    .update(entry.prevHash + canonicalJson(rest))
    .digest('hex');
}
