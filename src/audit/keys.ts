import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { type AuditKey, auditKeyId } from '../store/audit-hash.js';

/** The keys the audit trail knows: one to seal new entries with, and every one verify may meet. */
export interface AuditKeyring {
  /** Seals every new entry. Absent: the chain is unkeyed (plain sha256). */
  current?: AuditKey;
  /** The current key and the previous ones (after a rotation), by key id. */
  known: ReadonlyMap<string, Buffer>;
}

export const NO_AUDIT_KEYS: AuditKeyring = { known: new Map() };

/** A key shorter than this is refused: it is the only thing between a database writer and the chain. */
export const AUDIT_KEY_MIN_LENGTH = 32;

export interface AuditKeySources {
  /** `QUEUE_OPS_AUDIT_KEY`, as the entry point read it from the environment. */
  envKey?: string;
  /** `audit.keyFile`. */
  keyFile?: string;
  /** `audit.previousKeyFiles`: keys that sealed older entries, kept to verify them after a rotation. */
  previousKeyFiles?: readonly string[];
}

/**
 * Builds the keyring from the environment's key or `audit.keyFile` (one of them; both only if they
 * hold the same key) plus `audit.previousKeyFiles`. A key file holds the key as text; surrounding
 * whitespace (the trailing newline) is not part of it. Every problem is named at once, as the
 * config loader does, in a ConfigInvalid error.
 */
export function loadAuditKeys(sources: AuditKeySources, readFile: (path: string) => string): AuditKeyring {
  const t = messages().audit.keys;
  const problems: string[] = [];
  const read = (path: string, where: string): Buffer | undefined => {
    let text: string;
    try {
      text = readFile(path);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      problems.push(t.unreadable(where, path, typeof code === 'string' ? code : String(error)));
      return undefined;
    }
    return checked(text, where);
  };
  const checked = (text: string, where: string): Buffer | undefined => {
    const key = text.trim();
    if (key.length < AUDIT_KEY_MIN_LENGTH) {
      problems.push(t.tooShort(where, AUDIT_KEY_MIN_LENGTH));
      return undefined;
    }
    return Buffer.from(key, 'utf8');
  };

  const fromEnv =
    sources.envKey !== undefined && sources.envKey !== ''
      ? checked(sources.envKey, 'QUEUE_OPS_AUDIT_KEY')
      : undefined;
  const fromFile = sources.keyFile !== undefined ? read(sources.keyFile, 'audit.keyFile') : undefined;
  if (fromEnv && fromFile && !fromEnv.equals(fromFile)) problems.push(t.twoKeys);
  const previous = (sources.previousKeyFiles ?? []).map((path, i) =>
    read(path, `audit.previousKeyFiles[${i}]`),
  );
  if (problems.length > 0) throw new OpsError(ErrorCode.ConfigInvalid, { source: t.source, problems });

  const secret = fromEnv ?? fromFile;
  const known = new Map<string, Buffer>();
  for (const key of previous) if (key) known.set(auditKeyId(key), key);
  const current = secret ? { id: auditKeyId(secret), secret } : undefined;
  if (current) known.set(current.id, current.secret);
  return current ? { current, known } : { known };
}
