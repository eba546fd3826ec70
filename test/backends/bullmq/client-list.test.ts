import { describe, expect, it } from 'vitest';
import {
  majorOfVersion,
  parseClientList,
  workersFromClientList,
} from '../../../src/backends/bullmq/index.js';

const b64 = (name: string) => Buffer.from(name).toString('base64');

const line = (fields: Record<string, string>) =>
  Object.entries({ id: '7', addr: '10.0.0.5:51234', fd: '9', age: '120', idle: '3', ...fields })
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

describe('workersFromClientList', () => {
  it('keeps named and unnamed worker connections of the given queues, as Queue.getWorkers does', () => {
    const list = [
      line({ id: '1', addr: '10.0.0.1:1', name: `hs:${b64('dispatch-ios')}:w:w-alpha`, idle: '0' }),
      line({ id: '2', addr: '10.0.0.2:2', name: `hs:${b64('dispatch-ios')}`, idle: '4' }),
      line({ id: '3', addr: '10.0.0.3:3', name: `hs:${b64('dispatch-ios')}:qe` }),
      line({ id: '4', addr: '10.0.0.4:4', name: `hs:${b64('events')}:w:other-queue` }),
      line({ id: '5', addr: '10.0.0.5:5', name: `bull:${b64('dispatch-ios')}:w:other-prefix` }),
      line({ id: '6', addr: '10.0.0.6:6', name: '' }),
      line({ id: '7', addr: '10.0.0.7:7', name: 'queue-ops:pushizo' }),
    ].join('\n');
    expect(workersFromClientList(list, 'hs', ['dispatch-ios'])).toEqual([
      {
        name: '10.0.0.2:2',
        queues: ['dispatch-ios'],
        idleSeconds: 4,
        details: { addr: '10.0.0.2:2', ageSeconds: 120 },
      },
      {
        name: 'w-alpha',
        queues: ['dispatch-ios'],
        idleSeconds: 0,
        details: { addr: '10.0.0.1:1', ageSeconds: 120 },
      },
    ]);
  });

  it('keeps a worker name that itself contains colons', () => {
    const list = line({ name: `hs:${b64('events')}:w:pod-7:worker:2` });
    expect(workersFromClientList(list, 'hs', ['events']).map((w) => w.name)).toEqual(['pod-7:worker:2']);
  });

  it('matches prefixes that contain colons and queue names whose base64 is padded', () => {
    const list = line({ name: `{prod}:hs:${b64('ab')}:w:w1` });
    expect(b64('ab')).toMatch(/=$/);
    expect(workersFromClientList(list, '{prod}:hs', ['ab'])).toMatchObject([{ name: 'w1', queues: ['ab'] }]);
  });

  it('parses every field of a CLIENT LIST line', () => {
    expect(parseClientList('id=3 addr=127.0.0.1:6000 name= cmd=client|list\r\n')).toEqual([
      { id: '3', addr: '127.0.0.1:6000', name: '', cmd: 'client|list' },
    ]);
  });
});

describe('majorOfVersion', () => {
  it('picks the BullMQ major whose pause layout the queue uses', () => {
    expect(majorOfVersion('bullmq:6.7.0')).toBe(6);
    expect(majorOfVersion('bullmq:5.81.5')).toBe(5);
    expect(majorOfVersion('bullmq:4.17.0')).toBe(5);
    expect(majorOfVersion('bullmq-pro:7.20.1')).toBe(5);
    expect(majorOfVersion(null)).toBe(6);
    expect(majorOfVersion('something else')).toBe(6);
  });
});
