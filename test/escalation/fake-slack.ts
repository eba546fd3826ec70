import nock from 'nock';

/** One Web API call as the fake Slack received it. */
export interface SlackCall {
  method: string;
  body: Record<string, string>;
  blocks: Record<string, unknown>[];
  /** What the fake answered with. */
  status: number;
  ts?: string;
}

/**
 * Slack's Web API behind nock (the only fake the project allows): records every call, and
 * answers from a script first (`failNext(500)`, `failNext(429, { retryAfter: 7 })`) and then
 * like Slack: a new ts for each post, ok for updates.
 */
export function fakeSlack(host: string) {
  const calls: SlackCall[] = [];
  const script: { status: number; retryAfter?: number }[] = [];
  let counter = 0;
  const scope = nock(host)
    .persist()
    .post(/\/api\/chat\.(postMessage|update)$/)
    .reply((uri, raw) => {
      const method = uri.replace(/^.*\/api\//, '');
      const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
      const body = Object.fromEntries(new URLSearchParams(text));
      const blocks = body.blocks ? (JSON.parse(body.blocks) as Record<string, unknown>[]) : [];
      const next = script.shift();
      if (next) {
        calls.push({ method, body, blocks, status: next.status });
        if (next.status === 429) return [429, '', { 'Retry-After': String(next.retryAfter ?? 1) }];
        return [next.status, 'upstream trouble'];
      }
      const call: SlackCall = { method, body, blocks, status: 200 };
      calls.push(call);
      if (method === 'chat.postMessage') {
        counter += 1;
        call.ts = `1700000200.${String(counter).padStart(6, '0')}`;
        return [200, { ok: true, channel: body.channel, ts: call.ts }];
      }
      return [200, { ok: true, channel: body.channel, ts: body.ts }];
    });
  return {
    calls,
    /** Delivered calls only (what people saw). */
    delivered: () => calls.filter((c) => c.status === 200),
    failNext(status: number, options: { retryAfter?: number; times?: number } = {}) {
      for (let i = 0; i < (options.times ?? 1); i++) script.push({ status, retryAfter: options.retryAfter });
    },
    done: () => scope.persist(false),
  };
}

/** What kind of message a call is, for asserting sequences: post, update, thread. */
export function kindOf(call: SlackCall): 'post' | 'update' | 'thread' {
  if (call.method === 'chat.update') return 'update';
  return call.body.thread_ts ? 'thread' : 'post';
}
