import { expect, it } from 'vitest';
import { statusMessage } from '../../src/blocks/status.js';
import { statusRenderer } from '../../src/commands/status.js';
import { pushizoStatus } from '../blocks/fixtures.js';

const at = (iso: string) => new Date(iso);

it('renders a snapshot shared by concurrent commands once, and anew when anything shown differs', () => {
  const render = statusRenderer();
  const snapshot = pushizoStatus(12);
  const view = (generatedAt: Date, status = snapshot, scope = '') => ({
    generatedAt,
    scope,
    systems: [{ name: 'pushizo', type: 'bullmq' as const, ok: true as const, status }],
  });
  const first = render(view(at('2030-01-01T00:00:00.100Z')), 'en');
  expect(first).toEqual(statusMessage(view(at('2030-01-01T00:00:00.100Z')), 'en'));
  // Same status objects, same second: the very same message.
  expect(render(view(at('2030-01-01T00:00:00.900Z')), 'en')).toBe(first);
  // The "updated" second, a fresh read, the scope or the locale: rendered again, and correct.
  const later = render(view(at('2030-01-01T00:00:01.000Z')), 'en');
  expect(later).not.toBe(first);
  expect(later).toEqual(statusMessage(view(at('2030-01-01T00:00:01.000Z')), 'en'));
  const fresh = pushizoStatus(12);
  expect(render(view(at('2030-01-01T00:00:01.000Z'), fresh), 'en')).not.toBe(later);
  expect(render(view(at('2030-01-01T00:00:01.000Z'), fresh, 'pushizo'), 'en')).toEqual(
    statusMessage(view(at('2030-01-01T00:00:01.000Z'), fresh, 'pushizo'), 'en'),
  );
  expect(render(view(at('2030-01-01T00:00:01.000Z'), fresh, 'pushizo'), 'tr')).toEqual(
    statusMessage(view(at('2030-01-01T00:00:01.000Z'), fresh, 'pushizo'), 'tr'),
  );
});

it('renders a view with a system that could not be read every time (its error carries its own ref)', () => {
  const render = statusRenderer();
  const view = {
    generatedAt: at('2030-01-01T00:00:00Z'),
    scope: '',
    systems: [
      { name: 'zeus', type: 'celery' as const, ok: false as const, error: 'Redis for zeus is not answering' },
    ],
  };
  expect(render(view, 'en')).not.toBe(render(view, 'en'));
});
