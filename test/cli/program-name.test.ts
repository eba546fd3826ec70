import { describe, expect, it } from 'vitest';
import { programName } from '../../src/transports/cli/main.js';

/** The buttons hint names the command line as it can be run again (issue 38 §6). */
describe('programName', () => {
  it('a clone: node and the path from the working directory', () => {
    expect(programName('/home/me/queue-ops/bin/queue-ops.js', '/home/me/queue-ops', '/usr/bin')).toBe(
      'node bin/queue-ops.js',
    );
    expect(programName('/opt/q o/bin/queue-ops.js', '/tmp', '/usr/bin')).toBe(
      "node '/opt/q o/bin/queue-ops.js'",
    );
  });

  it('an install on PATH: queue-ops; through a project’s node_modules/.bin: npx queue-ops', () => {
    expect(programName('/usr/local/bin/queue-ops', '/tmp', '/usr/bin:/usr/local/bin')).toBe('queue-ops');
    expect(programName('/srv/app/node_modules/.bin/queue-ops', '/srv/app', '/usr/bin')).toBe('npx queue-ops');
  });
});
