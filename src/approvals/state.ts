import { RequestStatus } from '../store/store.js';

/**
 * The approval state machine. Every arrow is one conditional write in the store whose condition
 * is the old state, so a replayed or concurrent click can take an arrow at most once.
 *
 *   pending ──approve×N──▶ approved ──start──▶ executing ──▶ done | failed
 *      │ deny ▶ denied        │ requester or an approver lost     │ lease ran out (its bot died,
 *      └ ttl  ▶ expired       │ the role ▶ failed                 │ or could not write its outcome)
 *                             └ never started within a lease      └──▶ interrupted ─┐
 *                               ▶ interrupted                                        │
 *   interrupted ──the outcome its lease holder kept, written at last──▶ done | failed ◀┘
 *
 * `start`, and the outcome, are each one write with their audit entry (`request.executing`,
 * `action.<verb>`): a request still `approved` never ran; an `interrupted` one may have.
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
  // A kept outcome written at last, by its lease holder only (checked in the write): see above.
  finishLate: { from: [RequestStatus.Executing, RequestStatus.Interrupted], to: RequestStatus.Done },
  failLate: { from: [RequestStatus.Executing, RequestStatus.Interrupted], to: RequestStatus.Failed },
  interrupt: { from: [RequestStatus.Executing], to: RequestStatus.Interrupted },
} as const satisfies Record<string, { from: readonly RequestStatus[]; to: RequestStatus }>;

export type Transition = keyof typeof transitions;

export function isExpired(expiresAt: string, now: Date): boolean {
  return now.getTime() >= Date.parse(expiresAt);
}
