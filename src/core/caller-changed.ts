// The one topic the core declares: what a user may do changed. The tokens and users features
// publish it; long-lived connections (src/graphql/subscriptions/connection-rights.ts) close or narrow on hearing
// it, on every instance — so it lives below both, beside the Caller it is about.
import { Type } from 'typebox'
import { ROLES, type Role } from './caller.js'

/** One of a user's tokens was revoked, the user was deleted, or their role changed. */
export type CallerChanged =
  | { userId: number; change: 'token-revoked'; tokenId: number }
  | { userId: number; change: 'user-deleted' }
  | { userId: number; change: 'role-changed'; role: Role }

export interface CallerTopics {
  callerChanged: CallerChanged
}

/** Its shape, checked on events that come from another instance. */
export const CALLER_TOPICS = {
  callerChanged: Type.Union([
    Type.Object({ userId: Type.Integer(), change: Type.Literal('token-revoked'), tokenId: Type.Integer() }),
    Type.Object({ userId: Type.Integer(), change: Type.Literal('user-deleted') }),
    Type.Object({ userId: Type.Integer(), change: Type.Literal('role-changed'), role: Type.Union(ROLES.map((role) => Type.Literal(role))) }),
  ]),
} satisfies Record<keyof CallerTopics, object>
