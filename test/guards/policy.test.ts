import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { type DecideInput, decide, requirementFor } from '../../src/guards/policy.js';
import { messages } from '../../src/i18n/index.js';
import { factsOf } from '../../src/verbs.js';

const config: Config = configSchema.parse({
  slack: { allowedChannels: ['C0INCIDENT', 'C0OPS'] },
  systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1' }],
});

function input(overrides: Partial<DecideInput>): DecideInput {
  return {
    action: 'pause',
    verbs: factsOf,
    policies: config.policies,
    approvals: config.approvals,
    mutating: true,
    channel: 'C0INCIDENT',
    allowedChannels: config.slack.allowedChannels,
    via: 'slack',
    role: 'operator',
    has2fa: undefined,
    ...overrides,
  };
}

const with2fa = { ...config.approvals, require2fa: true };

describe('decide', () => {
  it.each([
    ['pause', 'operator', 0],
    ['resume', 'operator', 0],
    ['retry', 'operator', 0],
    ['scale', 'operator', 1],
    ['purge', 'admin', 1],
  ] as const)(
    '%s needs the %s role and %i approval(s) with the default policies',
    (action, role, approvals) => {
      expect(requirementFor(action, config.policies, factsOf)).toEqual({ role, approvals });
      expect(decide(input({ action, role }))).toEqual({ allow: true, approvalsNeeded: approvals });
    },
  );

  it('approvals needed come from the configured policy, not a constant', () => {
    const policies = { ...config.policies, pause: { role: 'operator' as const, approvals: 2 } };
    expect(decide(input({ policies }))).toEqual({ allow: true, approvalsNeeded: 2 });
  });

  it('a policy that asks for admin refuses an operator, naming admin', () => {
    const d = decide(input({ action: 'purge', role: 'operator' }));
    expect(d.allow).toBe(false);
    if (d.allow) return;
    expect(d.error.code).toBe('Forbidden');
    expect(d.error.params).toEqual({ role: 'admin', action: 'purge' });
  });

  it('a viewer running pause is refused with a line naming the operator role', () => {
    const d = decide(input({ role: 'viewer' }));
    if (d.allow) throw new Error('expected a denial');
    expect(messages('en').errors.describe(d.error)).toBe('You need the `operator` role to pause.');
  });

  it('someone with no role at all cannot even run a read-only command', () => {
    const d = decide(input({ action: 'status', mutating: false, role: undefined }));
    expect(d.allow).toBe(false);
    if (d.allow) return;
    expect(d.error.params).toEqual({ role: 'viewer', action: 'status' });
  });

  it('an admin may run operator actions', () => {
    expect(decide(input({ role: 'admin' }))).toEqual({ allow: true, approvalsNeeded: 0 });
  });

  it('a mutating command from a channel outside slack.allowedChannels is refused, naming the allowed channels', () => {
    const d = decide(input({ channel: 'C0RANDOM', role: 'admin' }));
    if (d.allow) throw new Error('expected a denial');
    expect(d.error.code).toBe('WrongChannel');
    expect(d.error.params).toEqual({ action: 'pause', channels: ['C0INCIDENT', 'C0OPS'] });
    expect(messages('en').errors.describe(d.error)).toContain('`C0INCIDENT`, `C0OPS`');
  });

  it('the channel is checked before the role, so the answer says where to go', () => {
    const d = decide(input({ channel: 'C0RANDOM', role: 'viewer' }));
    expect(d.allow ? undefined : d.error.code).toBe('WrongChannel');
  });

  it('a mutating Slack command with no channel at all is refused', () => {
    const d = decide(input({ channel: undefined }));
    expect(d.allow ? undefined : d.error.code).toBe('WrongChannel');
  });

  it('with no allowed channel configured, mutating commands run nowhere in Slack', () => {
    const d = decide(input({ allowedChannels: [] }));
    if (d.allow) throw new Error('expected a denial');
    expect(d.error.params.channels).toEqual([]);
  });

  it('read-only commands run in any channel', () => {
    expect(decide(input({ action: 'status', mutating: false, channel: 'C0RANDOM', role: 'viewer' }))).toEqual(
      {
        allow: true,
        approvalsNeeded: 0,
      },
    );
    expect(decide(input({ action: 'dlq', mutating: false, channel: 'D0DM', role: 'viewer' })).allow).toBe(
      true,
    );
  });

  it('the command line and the demo console are not channel-restricted, but are role-checked', () => {
    expect(decide(input({ via: 'cli', channel: undefined })).allow).toBe(true);
    expect(decide(input({ via: 'console', channel: undefined })).allow).toBe(true);
    const d = decide(input({ via: 'cli', channel: undefined, role: 'viewer' }));
    expect(d.allow ? undefined : d.error.code).toBe('Forbidden');
  });

  it('a mutating verb without a policy (approve, deny) passes here with viewer: its approver is checked later', () => {
    expect(decide(input({ action: 'approve', role: 'viewer' }))).toEqual({ allow: true, approvalsNeeded: 0 });
  });

  it('a mutating verb without a policy is still refused outside the allowed channels', () => {
    expect(decide(input({ action: 'approve', role: 'viewer', channel: 'C0RANDOM' })).allow).toBe(false);
  });

  describe('with approvals.require2fa', () => {
    it('an admin action is allowed when Slack confirms 2FA', () => {
      expect(decide(input({ action: 'purge', role: 'admin', approvals: with2fa, has2fa: true }))).toEqual({
        allow: true,
        approvalsNeeded: 1,
      });
    });

    it('an admin action is refused when Slack says 2FA is off', () => {
      const d = decide(input({ action: 'purge', role: 'admin', approvals: with2fa, has2fa: false }));
      if (d.allow) throw new Error('expected a denial');
      expect(d.error.code).toBe('TwoFactorRequired');
      expect(d.error.params.status).toBe('off');
    });

    it('an admin action is refused when Slack does not say, with a message that Slack did not confirm 2FA', () => {
      const d = decide(input({ action: 'purge', role: 'admin', approvals: with2fa, has2fa: undefined }));
      if (d.allow) throw new Error('expected a denial');
      expect(d.error.code).toBe('TwoFactorRequired');
      expect(d.error.params.status).toBe('unknown');
      expect(messages('en').errors.describe(d.error)).toContain('Slack did not confirm');
    });

    it('operator actions do not need 2FA, even when the actor is an admin', () => {
      expect(
        decide(input({ action: 'pause', role: 'admin', approvals: with2fa, has2fa: undefined })).allow,
      ).toBe(true);
    });

    it('without require2fa, an admin action does not look at 2FA', () => {
      expect(decide(input({ action: 'purge', role: 'admin', has2fa: false })).allow).toBe(true);
    });
  });
});
