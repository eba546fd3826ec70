import type { Logger } from 'pino';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { AuditEntry, AuditEntryInput, Store } from '../store/store.js';
import { auditEntryHash, canonicalJson } from './hash.js';

/** What `record` takes: an entry whose time defaults to the clock's now. */
export type AuditRecordInput = Omit<AuditEntryInput, 'at'> & { at?: string };

export type AuditVerifyResult =
  | { ok: true; count: number }
  /** `count` is how many entries verified before the first bad one. */
  | { ok: false; count: number; firstBad: { seq: number; reason: string } };

/** The audit trail: append-only, hash-chained, verifiable, exportable. */
export interface Audit {
  /**
   * Writes one entry and resolves once it is stored (await it before telling the user the
   * result). The sink, if any, gets the entry afterwards, in order, without holding this up.
   */
  record(input: AuditRecordInput): Promise<AuditEntry>;
  /** Walks the whole chain in seq order, a page at a time, and names the first bad entry. */
  verify(): Promise<AuditVerifyResult>;
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
  logger?: Pick<Logger, 'warn'>;
  /** Entries read per page by `verify` and `export`; default 500. */
  pageSize?: number;
}

function isoTime(value: string): string {
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) {
    throw new OpsError(ErrorCode.BadArgument, { value, valid: messages('en').audit.sinceValid });
  }
  return time.toISOString();
}

export function createAudit(deps: AuditDeps): Audit {
  const { store, now, sink } = deps;
  const pageSize = Math.max(1, deps.pageSize ?? 500);
  const reasons = messages('en').audit.verify.reasons;
  // Deliveries run one after another so the audit channel reads in chain order.
  let deliveries: Promise<void> = Promise.resolve();

  function offer(entry: AuditEntry): void {
    if (!sink) return;
    deliveries = deliveries
      .then(() => sink(entry))
      .catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        if (deps.logger) {
          deps.logger.warn(
            { seq: entry.seq, action: entry.action, err: reason },
            'audit sink failed; entry is stored',
          );
        } else {
          console.warn(`audit sink failed for entry #${entry.seq}; the entry is stored: ${reason}`);
        }
      });
  }

  async function* pages(options: { sinceAt?: string }): AsyncGenerator<AuditEntry[]> {
    let afterSeq = 0;
    for (;;) {
      const page = await store.listAudit({ ...options, afterSeq, limit: pageSize });
      if (page.length === 0) return;
      yield page;
      afterSeq = page[page.length - 1]!.seq;
      if (page.length < pageSize) return;
    }
  }

  return {
    async record(input) {
      const entry = await store.appendAudit({ ...input, at: input.at ?? now().toISOString() });
      offer(entry);
      return entry;
    },

    async verify() {
      let count = 0;
      let expectedSeq = 1;
      let prevHash = '';
      const bad = (seq: number, reason: string): AuditVerifyResult => ({
        ok: false,
        count,
        firstBad: { seq, reason },
      });
      for await (const page of pages({})) {
        for (const entry of page) {
          if (entry.seq !== expectedSeq) return bad(entry.seq, reasons.missing(expectedSeq, entry.seq - 1));
          if (entry.prevHash !== prevHash) return bad(entry.seq, reasons.brokenLink(expectedSeq - 1));
          if (auditEntryHash(entry) !== entry.hash) return bad(entry.seq, reasons.edited);
          prevHash = entry.hash;
          expectedSeq += 1;
          count += 1;
        }
      }
      const head = await store.auditHead?.();
      if (head) {
        const lastSeq = expectedSeq - 1;
        if (head.seq > lastSeq) return bad(lastSeq + 1, reasons.tailMissing(lastSeq + 1, head.seq));
        if (head.seq < lastSeq) return bad(head.seq + 1, reasons.notAppended(head.seq));
        if (lastSeq > 0 && head.hash !== prevHash) {
          count -= 1;
          return bad(lastSeq, reasons.headMismatch);
        }
      }
      return { ok: true, count };
    },

    async export(options, write) {
      let written = 0;
      const sinceAt = options.since === undefined ? undefined : isoTime(options.since);
      for await (const page of pages(sinceAt === undefined ? {} : { sinceAt })) {
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

    flush: () => deliveries,
  };
}
