import { describe, expect, it } from 'vitest';
import { rawJsonMembers, storedTask, taskEnvelope } from '../../../src/backends/celery/envelope.js';
import { priorityListFor } from '../../../src/backends/celery/keys.js';

const layout = {
  globalKeyprefix: '',
  prioritySteps: [0, 3, 6, 9],
  separator: '\x06\x16',
  fanoutPrefix: true,
  db: 0,
};

/** A FAILURE as Celery 5.2 stores it with result_extended=True (json serializer). */
const STORED =
  '{"status": "FAILURE", "result": {"exc_type": "ValueError", "exc_message": ["boom"], "exc_module": "builtins"}, ' +
  '"traceback": "Traceback (most recent call last):\\n ...", "children": [], "date_done": "2026-11-29T07:03:21.874833", ' +
  '"name": "tasks.measure", "args": [1.0, 12345678901234567890, "\\u00e7a\\u011fr\\u0131 \\"q\\" ]}"], ' +
  '"kwargs": {"when": {"nested": [1, {"x": "}"}]}}, "worker": "w1@lab", "retries": 2, "queue": "celery:measurement_processing", ' +
  '"task_id": "6f0c…"}';

describe('re-publishing a Celery task from its stored result', () => {
  it('keeps the arguments as the stored text: a float stays 1.0, a big integer keeps its digits', () => {
    const members = rawJsonMembers(STORED)!;
    expect(members.get('args')).toBe('[1.0, 12345678901234567890, "\\u00e7a\\u011fr\\u0131 \\"q\\" ]}"]');
    expect(members.get('kwargs')).toBe('{"when": {"nested": [1, {"x": "}"}]}}');
    const task = storedTask(STORED)!;
    expect(task).toMatchObject({ name: 'tasks.measure', queue: 'celery:measurement_processing' });
    const { id, message } = taskEnvelope(task, { origin: 'queue-ops', priority: 0 });
    const envelope = JSON.parse(message);
    const body = Buffer.from(envelope.body, 'base64').toString('utf8');
    expect(body).toBe(
      '[[1.0, 12345678901234567890, "\\u00e7a\\u011fr\\u0131 \\"q\\" ]}"], {"when": {"nested": [1, {"x": "}"}]}}, ' +
        '{"callbacks": null, "errbacks": null, "chain": null, "chord": null}]',
    );
    expect(envelope.headers).toMatchObject({ task: 'tasks.measure', id, retries: 0, eta: null, lang: 'py' });
    expect(envelope.properties).toMatchObject({
      correlation_id: id,
      body_encoding: 'base64',
      delivery_info: { exchange: '', routing_key: 'celery:measurement_processing' },
      priority: 0,
    });
    // the arguments are in the body only, never in the headers a worker logs
    expect(JSON.stringify(envelope.headers)).not.toContain('12345678901234567890');
  });

  it('needs name, args and queue: a result stored without result_extended gives nothing to send', () => {
    expect(storedTask('{"status": "FAILURE", "result": {}, "task_id": "x"}')).toBeUndefined();
    expect(storedTask('not json')).toBeUndefined();
    expect(rawJsonMembers('[1, 2]')).toBeUndefined();
  });

  it("picks kombu's priority list: the highest step not above the priority", () => {
    expect(priorityListFor(layout, 'celery', 0)).toBe('celery');
    expect(priorityListFor(layout, 'celery', 2)).toBe('celery');
    expect(priorityListFor(layout, 'celery', 5)).toBe('celery\x06\x163');
    expect(priorityListFor(layout, 'celery', 9)).toBe('celery\x06\x169');
    expect(priorityListFor(layout, 'celery', 42)).toBe('celery\x06\x169');
  });
});
