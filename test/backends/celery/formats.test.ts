import { describe, expect, it } from 'vitest';
import { formatCeleryError, parseDateDone, parseFailure } from '../../../src/backends/celery/failures.js';
import { memoryHighWarning } from '../../../src/backends/celery/index.js';
import {
  dbFromUrl,
  type KombuLayout,
  pidboxChannel,
  priorityKeys,
  queueOfBindingMember,
} from '../../../src/backends/celery/keys.js';
import { parseReply } from '../../../src/backends/celery/pidbox.js';

const layout: KombuLayout = {
  globalKeyprefix: '',
  prioritySteps: [0, 3, 6, 9],
  separator: '\x06\x16',
  fanoutPrefix: true,
  db: 3,
};

describe('kombu key layout', () => {
  it('names the priority lists of a queue whose name contains a colon, served-first first', () => {
    expect(priorityKeys(layout, 'celery:alarm_processing')).toEqual([
      'celery:alarm_processing',
      'celery:alarm_processing\x06\x163',
      'celery:alarm_processing\x06\x166',
      'celery:alarm_processing\x06\x169',
    ]);
    expect(priorityKeys({ ...layout, globalKeyprefix: 'pfx:', prioritySteps: [9, 0, 5] }, 'q')).toEqual([
      'pfx:q',
      'pfx:q\x06\x165',
      'pfx:q\x06\x169',
    ]);
  });

  it('puts the DB number and the global prefix in the pidbox channel, as kombu does', () => {
    expect(pidboxChannel(layout)).toBe('/3.celery.pidbox');
    expect(pidboxChannel({ ...layout, globalKeyprefix: 'pfx:', db: 5 })).toBe('pfx:/5.celery.pidbox');
    expect(pidboxChannel({ ...layout, fanoutPrefix: false })).toBe('celery.pidbox');
    expect(pidboxChannel({ ...layout, fanoutPrefix: '/x.' })).toBe('/x.celery.pidbox');
    expect(dbFromUrl('redis://:pw@h:6379/12')).toBe(12);
    expect(dbFromUrl('redis://h:6379')).toBe(0);
  });

  it('reads the queue out of a binding member, the third field', () => {
    expect(queueOfBindingMember(layout, 'celery\x06\x16\x06\x16celery')).toBe('celery');
    expect(queueOfBindingMember(layout, 'worker.#\x06\x16\x06\x16celeryev.1234')).toBe('celeryev.1234');
    expect(queueOfBindingMember(layout, 'garbage')).toBeUndefined();
  });
});

describe('result backend records', () => {
  const failure = JSON.stringify({
    status: 'FAILURE',
    result: { exc_type: 'ValueError', exc_message: ['boom 7\nmore lines'], exc_module: 'builtins' },
    traceback: 'Traceback (most recent call last):\n  secret stuff',
    children: [],
    date_done: '2026-11-29T07:03:21.874833',
    name: 'tasks.boom',
    args: ['password=hunter2'],
    kwargs: { token: 'abc' },
    worker: 'w1@lab',
    retries: 2,
    queue: 'celery:alarm_processing',
    task_id: 'id-1',
  });

  it('keeps id, name, first error line, attempts, time and queue, and nothing of the arguments', () => {
    const record = parseFailure('id-1', failure, null);
    expect(record).toEqual({
      id: 'id-1',
      name: 'tasks.boom',
      error: 'ValueError: boom 7',
      attempts: 3,
      failedAt: Date.UTC(2026, 10, 29, 7, 3, 21, 874),
      queue: 'celery:alarm_processing',
      expiresAt: null,
    });
    expect(JSON.stringify(record)).not.toMatch(/hunter2|abc|secret/);
  });

  it('ignores results that are not failures, or not JSON', () => {
    expect(parseFailure('x', JSON.stringify({ status: 'SUCCESS', result: 'FAILURE' }), null)).toBeUndefined();
    expect(parseFailure('x', '\x80\x04FAILURE pickle', null)).toBeUndefined();
  });

  it('leaves the queue unknown without result_extended', () => {
    const bare = JSON.stringify({
      status: 'FAILURE',
      result: { exc_type: 'KeyError', exc_message: ["'x'"] },
    });
    expect(parseFailure('id-2', bare, null)).toMatchObject({
      id: 'id-2',
      name: '',
      queue: null,
      attempts: 1,
    });
  });

  it('formats exceptions as type and first line', () => {
    expect(formatCeleryError({ exc_type: 'TimeoutError', exc_message: [] })).toBe('TimeoutError');
    expect(formatCeleryError({ exc_type: 'HTTPError', exc_message: [503, 'down'] })).toBe(
      'HTTPError: 503, down',
    );
    expect(formatCeleryError({ exc_type: 'E', exc_message: 'one\ntwo' })).toBe('E: one');
  });

  it('reads naive and zoned date_done values as UTC', () => {
    expect(parseDateDone('2026-11-29T07:03:21')).toBe(Date.UTC(2026, 10, 29, 7, 3, 21));
    expect(parseDateDone('2026-11-29T07:03:21.5+00:00')).toBe(Date.UTC(2026, 10, 29, 7, 3, 21, 500));
    expect(parseDateDone('yesterday')).toBeNull();
  });
});

describe('pidbox replies', () => {
  const envelope = (ticket: string, body: unknown) =>
    JSON.stringify({
      body: Buffer.from(JSON.stringify(body)).toString('base64'),
      'content-type': 'application/json',
      headers: { ticket, clock: 3 },
      properties: { body_encoding: 'base64', delivery_mode: 1 },
    });

  it('keeps only replies to our ticket', () => {
    expect(parseReply(envelope('t1', { 'w1@lab': { ok: 'pong' } }), 't1')).toEqual([
      { worker: 'w1@lab', reply: { ok: 'pong' } },
    ]);
    expect(parseReply(envelope('other', { 'w1@lab': { ok: 'pong' } }), 't1')).toBeUndefined();
    expect(parseReply('not json', 't1')).toBeUndefined();
  });
});

describe('memory warning', () => {
  it('warns above 90% of maxmemory and never without a limit', () => {
    expect(
      memoryHighWarning({ usedMemoryBytes: 95, maxMemoryBytes: 100, maxMemoryPolicy: 'allkeys-lru' }),
    ).toEqual({
      code: 'MemoryHigh',
      params: { percent: 95 },
    });
    expect(
      memoryHighWarning({ usedMemoryBytes: 90, maxMemoryBytes: 100, maxMemoryPolicy: 'noeviction' }),
    ).toBeUndefined();
    expect(
      memoryHighWarning({ usedMemoryBytes: 5e9, maxMemoryBytes: 0, maxMemoryPolicy: 'noeviction' }),
    ).toBeUndefined();
  });
});
