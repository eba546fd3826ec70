import { encodeSample, type Sample } from '../../src/escalation/samples.js';
import type { Store } from '../../src/store/store.js';

/**
 * Stores one monitor sample of `pushizo/dispatch-ios` (BullMQ, one worker, 8 active) at `at`, as
 * the monitor writes it (`encodeSample`): what `trend` tests draw.
 */
export async function appendDispatchIosSample(
  store: Store,
  at: number,
  depths: { waiting: number; delayed: number; failed: number },
): Promise<void> {
  const sample: Sample = {
    at,
    systems: [
      {
        name: 'pushizo',
        type: 'bullmq',
        ok: true,
        workers: ['w1'],
        queues: [
          {
            name: 'dispatch-ios',
            ...depths,
            active: 8,
            oldestWaitingSeconds: null,
            workers: 1,
          },
        ],
      },
    ],
  };
  await store.escalation.appendSample(new Date(at).toISOString(), encodeSample(sample));
}
