import { describe, expect, it } from 'vitest';
import { runDemo } from './run-demo.js';

/** The answer to one scripted command: from its `> cmd` echo to the next echo. */
function answer(output: string, command: string, occurrence = 0): string {
  let start = -1;
  for (let i = 0; i <= occurrence; i++) {
    start = output.indexOf(`> ${command}\n`, start + 1);
    if (start === -1) return '';
  }
  const rest = output.slice(start + command.length + 3);
  const next = rest.indexOf('\n> ');
  return next === -1 ? rest : rest.slice(0, next);
}

describe('the demo console on the full runtime', () => {
  it('takes a pause through request → approval by a second person → execution, and the audit trail shows it and verifies', async () => {
    const { code, stdout, stderr } = await runDemo([
      '--scale',
      'small',
      '--simulate-celery',
      '--script',
      'pending',
      '--script',
      '/queue pause pushizo/dispatch-ios',
      '--script',
      ':user U0BOB',
      '--script',
      '1',
      '--script',
      'status pushizo',
      '--script',
      'pending',
      '--script',
      'audit',
      '--script',
      'audit verify',
    ]);
    expect(stderr).not.toMatch(/\n\s+at /);
    // the banner says how to show the flow, in two lines
    const banner = stdout.split('\n');
    const first = banner.findIndex((l) => l.startsWith('Approvals:'));
    expect(first).toBeGreaterThan(-1);
    expect(`${banner[first]} ${banner[first + 1]}`).toMatch(
      /pause, scale and restart: U0ALICE asks.*pause pushizo\/dispatch-ios.*:user U0BOB.*Approve/,
    );

    expect(answer(stdout, 'pending', 0)).toContain('No requests are waiting');

    const requested = answer(stdout, '/queue pause pushizo/dispatch-ios');
    expect(requested).toContain('Waiting for approval');
    expect(requested).toContain('Requested by U0ALICE');
    expect(requested).toContain('Approvals: 0 of 1');
    expect(requested).toMatch(/\[1\] Approve/);
    const id = /`(r-[a-z0-9]+)`/.exec(requested)?.[1];
    expect(id).toBeDefined();

    const approved = answer(stdout, '1');
    expect(approved).toContain('Done');
    expect(approved).toContain('pushizo/dispatch-ios is paused.');
    expect(approved).toContain('Approved by U0BOB');
    expect(approved).toContain(id!);

    const row = answer(stdout, 'status pushizo')
      .split('\n')
      .find((l) => l.startsWith('dispatch-ios '));
    expect(row).toMatch(/\bpaused\b/);
    expect(answer(stdout, 'pending', 1)).toContain('No requests are waiting');

    const audit = answer(stdout, 'audit');
    expect(audit).toMatch(/U0ALICE `request\.created` pushizo\/dispatch-ios → requested/);
    expect(audit).toMatch(/U0BOB `request\.approved` pushizo\/dispatch-ios → approved/);
    expect(audit).toMatch(/U0BOB `action\.pause` pushizo\/dispatch-ios → done/);
    expect(answer(stdout, 'audit verify')).toMatch(/Audit chain verified: \d+ entries, unbroken/);
    expect(code).toBe(0);
  }, 120_000);
});
