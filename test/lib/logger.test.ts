import { describe, expect, it } from 'vitest';
import { createLogger, scrubSecrets } from '../../src/lib/logger.js';

function logged(write: (log: ReturnType<typeof createLogger>) => void): string {
  const lines: string[] = [];
  write(createLogger({ destination: { write: (line: string) => lines.push(line) } }));
  return lines.join('');
}

describe('the logger scrubs credentials it was never told about', () => {
  it('a password given as a ?password= query parameter (ioredis and pg accept it)', () => {
    const out = logged((log) =>
      log.error(
        { err: new Error('connect ECONNREFUSED redis://cache:6379/0?password=qp-secret-1&db=0') },
        'redis down; store postgres://db/ops?sslmode=require&password=qp-secret-2',
      ),
    );
    expect(out).not.toContain('qp-secret-1');
    expect(out).not.toContain('qp-secret-2');
    expect(out).toContain('redis://cache:6379/0?password=***');
  });

  it('a URL password holding an unencoded "/" or space', () => {
    const out = logged((log) =>
      log.warn(
        { url: 'redis://default:ab/cd ef@10.0.0.7:6379' },
        'retrying postgres://ops:x y/z@db.internal:5432/queue_ops',
      ),
    );
    expect(out).not.toContain('ab/cd');
    expect(out).not.toContain('cd ef');
    expect(out).not.toContain('x y/z');
    expect(out).toContain('@10.0.0.7:6379');
    expect(out).toContain('@db.internal:5432/queue_ops');
  });

  it('api keys, tokens and bearer credentials HTTP clients put in their errors', () => {
    const text = scrubSecrets(
      'GET https://x.example/v1?api_key=K123456&x=1 failed; token=T98765 Authorization: Bearer eyJabc.def.ghi',
    );
    expect(text).not.toMatch(/K123456|T98765|eyJabc/);
    expect(text).toContain('https://x.example/v1?api_key=***&x=1');
  });

  it('leaves ordinary text alone', () => {
    const plain = 'connect ECONNREFUSED 127.0.0.1:6379 (redis://cache:6379/0) after 3 attempts; keyboard=us';
    expect(scrubSecrets(plain)).toBe(plain);
  });
});
