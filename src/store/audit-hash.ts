import { createHash, createHmac } from 'node:crypto';
import type { AuditEntry, AuditKey } from './store.js';

// Defined beside the entries it seals (store.ts), which take it on append; named here too, with the hash.
export type { AuditKey };

/** What `audit verify` found walking the chain. */
export type AuditVerifyResult =
  | { ok: true; count: number }
  /** `count` is how many entries verified before the first bad one. */
  | { ok: false; count: number; firstBad: { seq: number; reason: string } };

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

/**
 * The id stored with each keyed entry: the first 8 hex digits of sha256(key). Enough to tell a
 * handful of rotated keys apart; far too little to learn anything about the key.
 */
export function auditKeyId(secret: Buffer): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 8);
}

/**
 * `sha256(prevHash + canonicalJson(entry without hash))`, hex; with `secret`, HMAC-SHA256 under it
 * instead, so that only a holder of the key can produce a hash that verifies. A keyed entry carries
 * its `keyId`, which the canonical JSON covers; an unkeyed one has none, so entries written before
 * keys existed hash exactly as they always did.
 */
export function auditEntryHash(entry: Omit<AuditEntry, 'hash'>, secret?: Buffer): string {
  const { hash: _ignored, ...rest } = entry as AuditEntry;
  const data = entry.prevHash + canonicalJson(rest);
  return (secret ? createHmac('sha256', secret) : createHash('sha256')).update(data).digest('hex');
}
