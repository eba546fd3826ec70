import { RequestStatus } from '../store/store.js';

/**
 * The approval state machine. Every arrow is one conditional write in the store whose condition
 * is the old state, so a replayed or concurrent click can take an arrow at most once.
 *
 *   pending ──approve×N──▶ approved ──start──▶ executing ──▶ done | failed
 *      │ deny ▶ denied        │ requester or an approver lost     │ lease ran out (its bot died)
 *      └ ttl  ▶ expired       │ the role ▶ failed                 └──▶ interrupted
 *                             └ never started within a lease ▶ interrupted
 */
export const transitions = {
  approve: { from: [RequestStatus.Pending], to: RequestStatus.Approved },
  deny: { from: [RequestStatus.Pending], to: RequestStatus.Denied },
  expire: { from: [RequestStatus.Pending], to: RequestStatus.Expired },
  start: { from: [RequestStatus.Approved], to: RequestStatus.Executing },
  refuse: { from: [RequestStatus.Approved], to: RequestStatus.Failed },
  abandon: { from: [RequestStatus.Approved], to: RequestStatus.Interrupted },
  finish: { from: [RequestStatus.Executing], to: RequestStatus.Done },
  fail: { from: [RequestStatus.Executing], to: RequestStatus.Failed },
  interrupt: { from: [RequestStatus.Executing], to: RequestStatus.Interrupted },
} as const satisfies Record<string, { from: readonly RequestStatus[]; to: RequestStatus }>;

export type Transition = keyof typeof transitions;

export function isExpired(expiresAt: string, now: Date): boolean {
  return now.getTime() >= Date.parse(expiresAt);
}
