import { WebClient } from '@slack/web-api';
import nock from 'nock';

/**
 * A real WebClient talking to a nock'd https://slack.com/api. Retries are off so that a Slack
 * error is seen at once instead of after WebClient's half-hour retry policy.
 */
export function slackClient(): WebClient {
  return new WebClient('xoxb-test', { retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
}

export function blockNetwork(): void {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
}

export function restoreNetwork(): void {
  nock.cleanAll();
  nock.enableNetConnect();
}

/**
 * Answers `usergroups.users.list` for one group (form-encoded body `usergroup=S…`) from a
 * function called per request, and counts the calls.
 */
export function serveUsergroup(groupId: string, members: () => string[] | { error: string }) {
  const calls = { count: 0 };
  nock('https://slack.com')
    .persist()
    .post('/api/usergroups.users.list', (body: Record<string, string>) => body.usergroup === groupId)
    .reply(() => {
      calls.count++;
      const answer = members();
      return [200, Array.isArray(answer) ? { ok: true, users: answer } : { ok: false, error: answer.error }];
    });
  return calls;
}

/** Answers `users.info` for one user; `has2fa` undefined leaves the field out, as Slack does for bots. */
export function serveUserInfo(userId: string, has2fa: boolean | undefined) {
  const calls = { count: 0 };
  nock('https://slack.com')
    .persist()
    .post('/api/users.info', (body: Record<string, string>) => body.user === userId)
    .reply(() => {
      calls.count++;
      const user: Record<string, unknown> = { id: userId, name: userId.toLowerCase(), is_admin: false };
      if (has2fa !== undefined) user.has_2fa = has2fa;
      return [200, { ok: true, user }];
    });
  return calls;
}
