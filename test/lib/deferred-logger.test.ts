import { describe, expect, it } from 'vitest';
import { createDeferredLogger } from '../../src/lib/deferred-logger.js';
import { createLogger, type LoggerOptions } from '../../src/lib/logger.js';

/** What a logger wrote once it settled, one parsed JSON line each. */
function collector(options: Omit<LoggerOptions, 'destination'>) {
  const lines: string[] = [];
  const logger = createDeferredLogger({
    ...options,
    destination: { write: (line: string) => lines.push(line) },
  });
  return { logger, lines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe("the command line's logger, which loads pino only for a line it writes", () => {
  it('writes the lines at its level and above, in the order they were logged, children with their bindings', async () => {
    const { logger, lines } = collector({ level: 'warn', base: { name: 'queue-ops', via: 'cli' } });
    const request = logger.child({ ref: 'r1', verb: 'status' });
    logger.info('not at warn');
    request.warn({ system: 'pushizo' }, 'redis slow');
    logger.error('store failed');
    request.child({ system: 'zeus' }).fatal('gave up');
    request.debug('not at warn either');
    await logger.settled();
    expect(
      lines().map(({ level, msg, ref, verb, system, name }) => ({ level, msg, ref, verb, system, name })),
    ).toEqual([
      { level: 40, msg: 'redis slow', ref: 'r1', verb: 'status', system: 'pushizo', name: 'queue-ops' },
      {
        level: 50,
        msg: 'store failed',
        ref: undefined,
        verb: undefined,
        system: undefined,
        name: 'queue-ops',
      },
      { level: 60, msg: 'gave up', ref: 'r1', verb: 'status', system: 'zeus', name: 'queue-ops' },
    ]);
  });

  it('writes a line as the eager logger does: serialized errors, the configured secrets scrubbed', async () => {
    const options = { level: 'warn' as const, secrets: ['s3cret-pass'], base: { name: 'queue-ops' } };
    const { logger, lines } = collector(options);
    const eager: string[] = [];
    const reference = createLogger({
      ...options,
      destination: { write: (line: string) => eager.push(line) },
    });
    const error = new Error('AUTH failed for s3cret-pass');
    logger.warn({ err: error }, 'login with s3cret-pass refused');
    reference.warn({ err: error }, 'login with s3cret-pass refused');
    await logger.settled();
    const [line] = lines();
    const [expected] = eager.map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(JSON.stringify(line)).not.toContain('s3cret-pass');
    const { time: _a, ...said } = line!;
    const { time: _b, ...wanted } = expected!;
    expect(said).toEqual(wanted);
  });

  it('at silent, or with nothing at its level, writes nothing and settles at once', async () => {
    const quiet = collector({ level: 'silent' });
    quiet.logger.fatal('never');
    const idle = collector({ level: 'error' });
    idle.logger.child({ ref: 'r2' }).warn('below error');
    await Promise.all([quiet.logger.settled(), idle.logger.settled()]);
    expect([...quiet.lines(), ...idle.lines()]).toEqual([]);
  });
});
