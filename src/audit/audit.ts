import type { Logger } from 'pino';
import { ErrorCode, OpsError } from '../errors.js';
import { type Catalog, type Locale, messages } from '../i18n/index.js';
import { type AuditVerifyResult, auditEntryHash, canonicalJson } from '../store/audit-hash.js';
import type { AuditEntry, AuditEntryInput, AuditKey, Store } from '../store/store.js';
import { type AuditKeyring, NO_AUDIT_KEYS } from './keys.js';
import type { AuditWitness, WitnessHead } from './witness.js';

/** What `record` takes: an entry whose time defaults to the clock's now. */
export type AuditRecordInput = Omit<AuditEntryInput, 'at'> & { at?: string };

// Defined beside the chain's hash, where the blocks that show it can import it from.
export type { AuditVerifyResult };

/** What `verify` made of one witness. */
export interface WitnessCheck {
  kind: AuditWitness['kind'];
  where: string;
  /**
   * `checked`: its newest head was compared with the store (`seq` says which); `empty`: it holds no
   * entry yet; `unreadable`: it could not be read (`error` says why), so it was not checked.
   */
  status: 'checked' | 'empty' | 'unreadable';
  seq?: number;
  error?: string;
}

/** `verify`'s verdict plus what it rested on: the keys, and the witnesses it checked. */
export interface AuditVerifyReport {
  result: AuditVerifyResult;
  /** The key new entries are sealed with; undefined when the chain is unkeyed. */
  keyId?: string;
  /** Every key id verify could check entries with (the current one and previous ones). */
  knownKeyIds: string[];
  witnesses: WitnessCheck[];
}

/** The audit trail: append-only, hash-chained, verifiable, exportable. */
export interface Audit {
  /** The id of the key new entries are sealed with; undefined when the chain is unkeyed. */
  readonly keyId?: string;
  /**
   * Writes one entry and resolves once it is stored and every witness file has its line (await it
   * before telling the user the result). The sink, if any, gets the entry afterwards, in order,
   * without holding this up.
   */
  record(input: AuditRecordInput): Promise<AuditEntry>;
  /**
   * Records `input` through `write`, which stores it in the same transaction as the state change
   * it records (the store's `…Audited` writes), so both are stored or neither. `write` gets the
   * entry (its time filled in) and the key to seal it with, and answers what it stored: `entry` is
   * absent when its condition did not hold and nothing was written. Witnesses and the sink then get
   * the entry as from `record`. Resolves to `write`'s answer.
   */
  recordWith<T extends { entry?: AuditEntry }>(
    input: AuditRecordInput,
    write: (entry: AuditEntryInput, key: AuditKey | undefined) => Promise<T>,
  ): Promise<T>;
  /**
   * Reads every witness's newest head, then the store's head, then walks the chain up to that head
   * in seq order, a page at a time, yielding to the event loop between pages. Names the first bad
   * entry. Entries appended meanwhile are past the head and are left for the next run.
   */
  verify(): Promise<AuditVerifyResult>;
  /** `verify`, with the keys and witnesses it rested on. */
  verifyReport(): Promise<AuditVerifyReport>;
  /**
   * Calls `write` once per entry (at or after `since`, an ISO time) with one line of JSON — keys
   * sorted, no trailing newline — in seq order. Resolves to the number of lines written.
   */
  export(options: { since?: string }, write: (line: string) => void): Promise<number>;
  /** The newest `n` entries, newest first; with `visibleIn`, only those a viewer there may see. */
  recent(n: number, options?: { visibleIn?: string }): Promise<AuditEntry[]>;
  /** Resolves when every entry recorded so far has been offered to the sink (for shutdown and tests). */
  flush(): Promise<void>;
}

export interface AuditDeps {
  store: Store;
  now: () => Date;
  /** Gets each entry after it is stored, e.g. to post it to `slack.auditChannel`. */
  sink?: (entry: AuditEntry) => Promise<void>;
  /** The config's `locale`, for the reasons `audit verify` gives. English by default. */
  locale?: Locale;
  logger?: Pick<Logger, 'warn'>;
  /** Entries read per page by `verify` and `export`; default 500. */
  pageSize?: number;
  /** The audit keys (`loadAuditKeys`); without them the chain is unkeyed. */
  keys?: AuditKeyring;
  /** Copies of the head outside the store: written on every record (if they can be), read by verify. */
  witnesses?: readonly AuditWitness[];
}

/** Lets timers and sockets run between pages: a year of entries must not freeze the bot. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function isoTime(value: string): string {
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) {
    throw new OpsError(ErrorCode.BadArgument, { value, valid: messages().audit.sinceValid });
  }
  return time.toISOString();
}

/** The entries at or after `sinceAt`, a page at a time, yielding to the event loop between pages. */
async function* auditPages(
  store: Pick<Store, 'listAudit'>,
  pageSize: number,
  options: { sinceAt?: string },
): AsyncGenerator<AuditEntry[]> {
  let afterSeq = 0;
  for (;;) {
    const page = await store.listAudit({ ...options, afterSeq, limit: pageSize });
    if (page.length === 0) return;
    yield page;
    afterSeq = page[page.length - 1]!.seq;
    if (page.length < pageSize) return;
    await yieldToEventLoop();
  }
}

/** Offers each stored entry to the sink, one after another so the audit channel reads in chain order. */
function sinkDelivery(sink: AuditDeps['sink'], logger: AuditDeps['logger']) {
  let deliveries: Promise<void> = Promise.resolve();

  function offer(entry: AuditEntry): void {
    if (!sink) return;
    deliveries = deliveries
      .then(() => sink(entry))
      .catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        if (logger) {
          logger.warn(
            { seq: entry.seq, action: entry.action, err: reason },
            'audit sink failed; entry is stored',
          );
        } else {
          console.warn(`audit sink failed for entry #${entry.seq}; the entry is stored: ${reason}`);
        }
      });
  }

  return { offer, flush: () => deliveries };
}

/** Every witness's newest head, or why it could not be read. */
async function readWitnesses(
  witnesses: readonly AuditWitness[],
): Promise<{ witness: AuditWitness; head?: WitnessHead; error?: string }[]> {
  return await Promise.all(
    witnesses.map(async (witness) => {
      try {
        const head = await witness.newestHead();
        return head ? { witness, head } : { witness };
      } catch (error) {
        return { witness, error: reasonOf(error) };
      }
    }),
  );
}

/** What `verify` reads: the store's chain, its keys and witnesses, and the words for a bad entry. */
interface VerifyDeps {
  store: Store;
  keys: AuditKeyring;
  witnesses: readonly AuditWitness[];
  pageSize: number;
  reasons: Catalog['audit']['verify']['reasons'];
}

/** See {@link Audit.verify}: the chain walked up to the store's head, checked against keys and witnesses. */
async function verifyChain({
  store,
  keys,
  witnesses,
  pageSize,
  reasons,
}: VerifyDeps): Promise<AuditVerifyReport> {
  // Witnesses first, then the head: a witness only ever hears of an entry after the store has
  // committed it, so read in this order every witness head is at or below the store's head.
  const seen = await readWitnesses(witnesses);
  const head = await store.auditHead?.();
  const witnessChecks: WitnessCheck[] = seen.map(({ witness, head: w, error }) => ({
    kind: witness.kind,
    where: witness.where,
    ...(error !== undefined
      ? { status: 'unreadable' as const, error }
      : w
        ? { status: 'checked' as const, seq: w.seq }
        : { status: 'empty' as const }),
  }));
  const label = (witness: AuditWitness) => reasons.witness[witness.kind](witness.where);
  const wanted = new Map<number, { hash: string; witness: AuditWitness }[]>();
  for (const { witness, head: w } of seen) {
    if (!w) continue;
    wanted.set(w.seq, [...(wanted.get(w.seq) ?? []), { hash: w.hash, witness }]);
  }

  let count = 0;
  let expectedSeq = 1;
  let prevHash = '';
  let keyedSeen = false;
  const report = (result: AuditVerifyResult): AuditVerifyReport => ({
    result,
    ...(keys.current ? { keyId: keys.current.id } : {}),
    knownKeyIds: [...keys.known.keys()],
    witnesses: witnessChecks,
  });
  const bad = (seq: number, reason: string) => report({ ok: false, count, firstBad: { seq, reason } });

  walk: for await (const page of auditPages(store, pageSize, {})) {
    for (const entry of page) {
      // Appended after the head was read: the next run checks it.
      if (head && entry.seq > head.seq) break walk;
      if (entry.seq !== expectedSeq) return bad(entry.seq, reasons.missing(expectedSeq, entry.seq - 1));
      if (entry.prevHash !== prevHash) return bad(entry.seq, reasons.brokenLink(expectedSeq - 1));
      if (entry.keyId !== undefined) {
        const secret = keys.known.get(entry.keyId);
        if (!secret) {
          return bad(
            entry.seq,
            keys.known.size > 0 ? reasons.keyUnknown(entry.keyId) : reasons.keyMissing(entry.keyId),
          );
        }
        if (auditEntryHash(entry, secret) !== entry.hash) return bad(entry.seq, reasons.edited);
        keyedSeen = true;
      } else {
        // Keys only ever come in: an unkeyed entry after a keyed one was written, or rewritten,
        // by someone without the key.
        if (keyedSeen) return bad(entry.seq, reasons.unkeyedAfterKeyed);
        if (auditEntryHash(entry) !== entry.hash) return bad(entry.seq, reasons.edited);
      }
      for (const w of wanted.get(entry.seq) ?? []) {
        if (w.hash !== entry.hash) return bad(entry.seq, reasons.witnessMismatch(label(w.witness)));
      }
      prevHash = entry.hash;
      expectedSeq += 1;
      count += 1;
    }
  }
  const lastSeq = expectedSeq - 1;
  if (head) {
    if (head.seq > lastSeq) return bad(lastSeq + 1, reasons.tailMissing(lastSeq + 1, head.seq));
    if (lastSeq > 0 && head.hash !== prevHash) {
      count -= 1;
      return bad(lastSeq, reasons.headMismatch);
    }
  }
  for (const { witness, head: w } of seen) {
    if (w && w.seq > lastSeq)
      return bad(lastSeq + 1, reasons.witnessAhead(label(witness), lastSeq + 1, w.seq));
  }
  if (keys.current && lastSeq > 0 && !keyedSeen) {
    count = 0;
    return bad(1, reasons.unkeyedTail(1, lastSeq));
  }
  if (head && head.maxSeq > head.seq) return bad(head.seq + 1, reasons.notAppended(head.seq));
  return report({ ok: true, count });
}

export function createAudit(deps: AuditDeps): Audit {
  const { store, now } = deps;
  const keys = deps.keys ?? NO_AUDIT_KEYS;
  const witnesses = deps.witnesses ?? [];
  const pageSize = Math.max(1, deps.pageSize ?? 500);
  const reasons = messages(deps.locale ?? 'en').audit.verify.reasons;
  const delivery = sinkDelivery(deps.sink, deps.logger);
  const verifyReport = () => verifyChain({ store, keys, witnesses, pageSize, reasons });

  const warn = (obj: Record<string, unknown>, line: string) => {
    if (deps.logger) deps.logger.warn(obj, line);
    else console.warn(line, obj);
  };

  /** After an entry is stored: its line in every witness file, then the sink. */
  async function witnessed(entry: AuditEntry): Promise<void> {
    for (const witness of witnesses) {
      if (!witness.record) continue;
      try {
        await witness.record(entry);
      } catch (error) {
        // The entry is stored; a witness that missed it is behind, never wrong.
        warn(
          { seq: entry.seq, witness: witness.where, err: reasonOf(error) },
          'audit witness not written; the entry is stored',
        );
      }
    }
    delivery.offer(entry);
  }

  return {
    ...(keys.current ? { keyId: keys.current.id } : {}),

    async record(input) {
      const entry = await store.appendAudit({ ...input, at: input.at ?? now().toISOString() }, keys.current);
      await witnessed(entry);
      return entry;
    },

    async recordWith(input, write) {
      const stored = await write({ ...input, at: input.at ?? now().toISOString() }, keys.current);
      if (stored.entry) await witnessed(stored.entry);
      return stored;
    },

    async verify() {
      return (await verifyReport()).result;
    },

    verifyReport,

    async export(options, write) {
      let written = 0;
      const sinceAt = options.since === undefined ? undefined : isoTime(options.since);
      for await (const page of auditPages(store, pageSize, sinceAt === undefined ? {} : { sinceAt })) {
        // Never written out before it is on disk: an entry a power cut then took back would
        // leave the copy disagreeing with the chain for good (its seq reused by another entry).
        await store.sync?.();
        for (const entry of page) {
          write(canonicalJson(entry));
          written += 1;
        }
      }
      return written;
    },

    async recent(n, options = {}) {
      if (!Number.isFinite(n) || n <= 0) return [];
      return await store.listAudit({
        limit: Math.floor(n),
        newestFirst: true,
        ...(options.visibleIn === undefined ? {} : { visibleIn: options.visibleIn }),
      });
    },

    flush: delivery.flush,
  };
}
