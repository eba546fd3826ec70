import nock from 'nock';
import { afterAll, beforeAll } from 'vitest';

/**
 * For the file or `describe` it is called in: HTTP beyond 127.0.0.1 is refused unless nock answers
 * it, so a test can only reach the Slack or Kubernetes it set up (Redis and loopback servers stay
 * reachable); afterwards the network is open again.
 */
export function onlyNockBeyondLoopback(): void {
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  afterAll(() => {
    nock.enableNetConnect();
  });
}
