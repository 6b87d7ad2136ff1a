// The events port: what happened, told to whoever listens — in this process (memory-events.ts)
// or, when scaling out, across instances (redis-events.ts). Services publish after their write
// has committed; the GraphQL subscriptions listen, and are told when delivery is interrupted.
import { Type } from 'typebox'
import { ROLES, type Role } from '../core/caller.js'
import { Comment } from '../comments/comments.schemas.js'
import { Post } from '../posts/posts.schemas.js'
import { User } from '../users/users.schemas.js'

/** A comment was created: the comment, its post and its author, as they were at that moment. */
export interface CommentAdded {
  comment: Comment
  post: Post
  author: User
}

/**
 * What a user may do changed: one of their tokens was revoked, they were deleted, or their role
 * changed. Open connections (WebSocket, event stream) acting for them close or narrow on hearing it.
 */
export type CallerChanged =
  | { userId: number; change: 'token-revoked'; tokenId: number }
  | { userId: number; change: 'user-deleted' }
  | { userId: number; change: 'role-changed'; role: Role }

export interface EventMap {
  commentAdded: CommentAdded
  callerChanged: CallerChanged
}

export type EventName = keyof EventMap

const INPUT_RULES = new Set(['pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum'])

/**
 * Each event's shape, by name (a name added to EventMap and missing here does not compile). An
 * event that comes from outside the process (Redis) is delivered only when it matches: anyone who
 * can publish on the channel could otherwise hand subscribers half an object. Only the structure
 * is checked (types, required fields, enums), not the rules on input (lengths, patterns, formats):
 * a row stored before a rule was tightened still makes an event.
 */
export const EVENT_SCHEMAS: Record<EventName, object> = {
  commentAdded: shapeOf(Type.Object({ comment: Comment, post: Post, author: User })),
  callerChanged: Type.Union([
    Type.Object({ userId: Type.Integer(), change: Type.Literal('token-revoked'), tokenId: Type.Integer() }),
    Type.Object({ userId: Type.Integer(), change: Type.Literal('user-deleted') }),
    Type.Object({ userId: Type.Integer(), change: Type.Literal('role-changed'), role: Type.Union(ROLES.map((role) => Type.Literal(role))) }),
  ]),
}

/** `schema` without the rules on input, as plain JSON schema. */
function shapeOf(schema: object): object {
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([keyword]) => !INPUT_RULES.has(keyword) && !keyword.startsWith('x-'))
      .map(([keyword, value]) => {
        if (keyword === 'properties') return [keyword, Object.fromEntries(Object.entries(value as Record<string, object>).map(([name, property]) => [name, shapeOf(property)]))]
        return [keyword, typeof value === 'object' && value !== null && !Array.isArray(value) ? shapeOf(value as object) : value]
      }),
  )
}

export const EVENT_NAMES = Object.keys(EVENT_SCHEMAS) as readonly EventName[]

/**
 * What a subscriber is told besides events, by an adapter whose delivery can stop (Redis): that
 * events may be missed from now on, and that they flow again. The in-process adapter never stops.
 */
export interface DeliverySignals {
  /** Delivery stopped: events published from now on may never arrive. Once per outage; at once for a subscription opened during one. */
  onInterrupted?(): void
  /** Delivery works again: events published from now on arrive. */
  onResumed?(): void
}

/** What an adapter counts, for the service's counters. */
export interface EventsStats {
  /** Events that could not be handed on (logged when a run of failures starts). */
  readonly publishFailures: number
  /** Times delivery to this process stopped. */
  readonly interruptions: number
}

export interface Events {
  /**
   * Tells every listener of `name`. Never rejects: the write it reports has committed, and an
   * adapter that cannot deliver logs and counts the failure instead.
   */
  publish<N extends EventName>(name: N, event: EventMap[N]): Promise<void>
  /** Calls `listener` with each event of `name` from now on; returns the unsubscribe function. */
  subscribe<N extends EventName>(name: N, listener: (event: EventMap[N]) => void, signals?: DeliverySignals): () => void
  /** Listeners of `name` in this process (open subscriptions). */
  listenerCount(name: EventName): number
  readonly stats: EventsStats
  /** Whether delivery across instances works right now (Redis: both connections up); absent in the process. */
  connected?(): boolean
  close(): Promise<void>
}
