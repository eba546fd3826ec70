/** A kombu envelope as Celery's `apply_async` LPUSHes it, with its own task id (n in its last digits). */
export function celeryEnvelope(n: number): string {
  const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return JSON.stringify({
    body: Buffer.from(
      JSON.stringify([[n, 1], {}, { callbacks: null, errbacks: null, chain: null }]),
    ).toString('base64'),
    'content-encoding': 'utf-8',
    'content-type': 'application/json',
    headers: {
      lang: 'py',
      task: 'tasks.add',
      id,
      root_id: id,
      parent_id: null,
      retries: 0,
      argsrepr: `(${n}, 1)`,
    },
    properties: {
      correlation_id: id,
      delivery_mode: 2,
      delivery_info: { exchange: '', routing_key: 'celery' },
      priority: 0,
      body_encoding: 'base64',
      delivery_tag: id,
    },
  });
}

/** The task id of a kombu envelope. */
export const taskIdOf = (message: string) => (JSON.parse(message) as { headers: { id: string } }).headers.id;
