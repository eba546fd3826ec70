import nock, { type ReplyFnResult } from 'nock';

/** One Web API call as the fake Slack received it. */
export interface SlackCall {
  method: string;
  body: Record<string, string>;
  blocks: Record<string, unknown>[];
  /** What the fake answered with. */
  status: number;
  ts?: string;
}

/** Where the fake's `files.getUploadURLExternal` tells the client to POST a file's bytes. */
export const UPLOAD_HOST = 'https://files.slack.test';

/** One file as the fake received it through the three steps of `files.uploadV2`. */
export interface SlackUpload {
  fileId: string;
  /** `files.getUploadURLExternal` form fields (filename, length). */
  requested: Record<string, string>;
  /** The body POSTed to the upload URL (multipart form data). */
  body?: Buffer;
  /** The PNG inside that body, signature to IEND chunk (charts only). */
  png?: Buffer;
  /** `files.completeUploadExternal` form fields (files JSON, channel_id, thread_ts). */
  completed?: Record<string, string>;
}

/**
 * Slack's Web API behind nock (the only fake the project allows): records every call, and
 * answers from a script first (`failNext(500)`, `failNext(429, { retryAfter: 7 })`) and then
 * like Slack: a new ts for each post, ok for updates.
 */
export function fakeSlack(host: string, options: { now?: () => number } = {}) {
  const calls: SlackCall[] = [];
  const uploads: SlackUpload[] = [];
  /** Failures scripted for the next upload-URL requests (`failUploadNext`). */
  const uploadFailures: (number | string)[] = [];
  /** Faults scripted for the next POSTs of a file's bytes to its upload URL (`failUploadUrlNext`). */
  const uploadUrlFaults: Fault[] = [];
  /** Every POST of bytes to an upload URL, with what the fake answered (0: it hung). */
  const uploadPosts: { fileId: string; status: number }[] = [];
  const form = (raw: unknown) =>
    Object.fromEntries(new URLSearchParams(typeof raw === 'string' ? raw : JSON.stringify(raw)));
  const files = nock(host)
    .persist()
    .post('/api/files.getUploadURLExternal')
    .reply((_uri, raw) => {
      const failure = uploadFailures.shift();
      // A string is Slack's own refusal: HTTP 200 with `ok: false`.
      if (typeof failure === 'string') return [200, { ok: false, error: failure }];
      if (failure) return [failure, 'upstream trouble'];
      const fileId = `F0CHART${uploads.length + 1}`;
      uploads.push({ fileId, requested: form(raw) });
      return [200, { ok: true, upload_url: `${UPLOAD_HOST}/upload/v1/${fileId}`, file_id: fileId }];
    })
    .post('/api/files.completeUploadExternal')
    .reply((_uri, raw) => {
      const body = form(raw);
      const id = (JSON.parse(body.files ?? '[]') as { id: string }[])[0]?.id;
      const upload = uploads.find((u) => u.fileId === id);
      if (upload) upload.completed = body;
      calls.push({ method: 'files.completeUploadExternal', body, blocks: [], status: 200 });
      return [200, { ok: true, files: [{ id, title: 'chart' }] }];
    });
  // conversations.open: the direct-message channel with one user (`D` + their id), as Slack answers.
  const directs = nock(host)
    .persist()
    .post('/api/conversations.open')
    .reply((_uri, raw) => {
      const body = form(raw);
      calls.push({ method: 'conversations.open', body, blocks: [], status: 200 });
      return [200, { ok: true, channel: { id: `D${body.users}` } }];
    });
  const uploadScope = nock(UPLOAD_HOST)
    .persist()
    .post(/\/upload\/v1\/F0CHART\d+$/)
    .reply((uri, raw, answer) => {
      const id = uri.split('/').at(-1)!;
      const fault = uploadUrlFaults.shift();
      if (fault) {
        uploadPosts.push({ fileId: id, status: fault.hangMs ? 0 : fault.status });
        faultAnswer(fault, answer);
        return;
      }
      uploadPosts.push({ fileId: id, status: 200 });
      const upload = uploads.find((u) => u.fileId === id);
      if (upload) {
        // nock hands a binary body (a PNG) over hex-encoded, and a text one (Markdown) as it is.
        const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
        upload.body = /^(?:[0-9a-f]{2})+$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'utf8');
        upload.png = pngIn(upload.body);
      }
      answer(null, [200, 'OK - 1234']);
    });
  const script: Fault[] = [];
  let counter = 0;
  /** Every message Slack holds (posted, or posted but answered with an error), as history shows it. */
  const history: { channel: string; ts: string; metadata?: Record<string, unknown> }[] = [];
  /** conversations.history calls, apart from `calls` (they are reads, not messages). */
  const lookups: Record<string, string>[] = [];
  const keep = (body: Record<string, string>) => {
    counter += 1;
    // Slack's ts is its own clock's seconds; a test with a clock of its own passes it.
    const seconds = options.now ? Math.floor(options.now() / 1000) : 1700000200;
    const ts = `${seconds}.${String(counter).padStart(6, '0')}`;
    history.unshift({
      channel: body.channel!,
      ts,
      ...(body.metadata ? { metadata: JSON.parse(body.metadata) as Record<string, unknown> } : {}),
    });
    return ts;
  };
  const historyScope = nock(host)
    .persist()
    .post('/api/conversations.history')
    .reply((_uri, raw) => {
      const body = form(raw);
      lookups.push(body);
      const oldest = Number(body.oldest ?? 0);
      const messages = history
        .filter((m) => m.channel === body.channel && Number(m.ts) >= oldest)
        .map((m) => ({ type: 'message', ts: m.ts, ...(m.metadata ? { metadata: m.metadata } : {}) }));
      return [200, { ok: true, messages, has_more: false }];
    });
  const scope = nock(host)
    .persist()
    .post(/\/api\/chat\.(postMessage|update)$/)
    .reply((uri, raw, answer) => {
      const method = uri.replace(/^.*\/api\//, '');
      const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
      const body = Object.fromEntries(new URLSearchParams(text));
      const blocks = body.blocks ? (JSON.parse(body.blocks) as Record<string, unknown>[]) : [];
      const next = script.shift();
      if (next) {
        // Slack took the message, but its answer never arrived (a 5xx from a proxy, a timeout).
        if (next.posted && method === 'chat.postMessage') keep(body);
        calls.push({ method, body, blocks, status: next.hangMs ? 0 : next.status });
        faultAnswer(next, answer);
        return;
      }
      const call: SlackCall = { method, body, blocks, status: 200 };
      calls.push(call);
      if (method === 'chat.postMessage') {
        call.ts = keep(body);
        answer(null, [200, { ok: true, channel: body.channel, ts: call.ts }]);
        return;
      }
      answer(null, [200, { ok: true, channel: body.channel, ts: body.ts }]);
    });
  return {
    calls,
    /** Files uploaded with `files.uploadV2` (charts), each through its three steps. */
    uploads,
    /** Delivered calls only (what people saw). */
    delivered: () => calls.filter((c) => c.status === 200),
    /** conversations.history requests (the outbox looking for an earlier post). */
    lookups,
    /**
     * The next `times` posts or updates fail with HTTP `status`; with `posted`, a post is kept
     * by Slack all the same (its answer is what got lost). With `hangMs`, Slack holds the call
     * that long before answering (past the client's timeout: the call is recorded with status 0).
     */
    failNext(
      status: number,
      options: { retryAfter?: number; times?: number; posted?: boolean; hangMs?: number } = {},
    ) {
      for (let i = 0; i < (options.times ?? 1); i++)
        script.push({
          status,
          retryAfter: options.retryAfter,
          posted: options.posted,
          hangMs: options.hangMs,
        });
    },
    /**
     * The next `times` files.getUploadURLExternal calls answer with HTTP `status`, or with
     * `{ ok: false, error }` when it is Slack's error code (`missing_scope`).
     */
    failUploadNext(status: number | string, times = 1) {
      for (let i = 0; i < times; i++) uploadFailures.push(status);
    },
    /**
     * The next `times` POSTs of a file's bytes to its upload URL fail with HTTP `status` (429:
     * with `retryAfter`), or hang for `hangMs` first. The file is then never completed.
     */
    failUploadUrlNext(
      status: number,
      options: { retryAfter?: number; times?: number; hangMs?: number } = {},
    ) {
      for (let i = 0; i < (options.times ?? 1); i++)
        uploadUrlFaults.push({ status, retryAfter: options.retryAfter, hangMs: options.hangMs });
    },
    /** Every POST to an upload URL, with the status answered (0: hung past the client). */
    uploadPosts,
    done: () => {
      scope.persist(false);
      files.persist(false);
      directs.persist(false);
      historyScope.persist(false);
      uploadScope.persist(false);
    },
  };
}

/** A scripted failure: an HTTP status (429 with Retry-After), optionally after a hang. */
interface Fault {
  status: number;
  retryAfter?: number | undefined;
  posted?: boolean | undefined;
  hangMs?: number | undefined;
}

type Answer = (error: NodeJS.ErrnoException | null, reply: ReplyFnResult) => void;

/** Answers as `fault` says: at once, or after `hangMs` (by then the client has given up). */
function faultAnswer(fault: Fault, answer: Answer): void {
  const reply: ReplyFnResult =
    fault.status === 429
      ? [429, '', { 'Retry-After': String(fault.retryAfter ?? 1) }]
      : [fault.status, 'upstream trouble'];
  if (fault.hangMs) setTimeout(() => answer(null, reply), fault.hangMs).unref();
  else answer(null, reply);
}

/** What kind of message a call is, for asserting sequences: post, update, thread. */
export function kindOf(call: SlackCall): 'post' | 'update' | 'thread' | 'chart' {
  if (call.method === 'chat.update') return 'update';
  if (call.method === 'files.completeUploadExternal') return 'chart';
  return call.body.thread_ts ? 'thread' : 'post';
}

const PNG_SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

/** The PNG file inside a multipart body, or undefined when there is none. */
function pngIn(body: Buffer): Buffer | undefined {
  const start = body.indexOf(PNG_SIGNATURE);
  const iend = body.indexOf('IEND', start);
  // IEND is followed by its 4-byte CRC.
  return start === -1 || iend === -1 ? undefined : body.subarray(start, iend + 8);
}
