import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';

const text = readFileSync(join(import.meta.dirname, '../../queue-ops.example.yml'), 'utf8');

describe('queue-ops.example.yml, the config README starts a newcomer with', () => {
  it('is a valid config once the environment variables it names are set', () => {
    const config = parseConfig(text, {
      PUSHIZO_REDIS_URL: 'redis://127.0.0.1:6379/0',
      ZEUS_BROKER_URL: 'redis://127.0.0.1:6379/1',
    });
    expect(config.systems.map((s) => [s.name, s.type])).toEqual([
      ['pushizo', 'bullmq'],
      ['zeus', 'celery'],
    ]);
    expect(config.slack.incidentChannel).toBe('C0123INCIDENT');
  });

  it('gives a purge two different admins to ask and approve', () => {
    const config = parseConfig(text, { PUSHIZO_REDIS_URL: 'redis://h:1', ZEUS_BROKER_URL: 'redis://h:2' });
    expect(config.policies.purge.approvals).toBeGreaterThan(0);
    expect(new Set(config.roles.admin).size).toBeGreaterThan(config.policies.purge.approvals);
  });
});
