// Rights follow the caller on long-lived connections. A WebSocket or an event stream is opened by
// a caller, then lives for hours; meanwhile its token may be revoked or expire, its user deleted or
// their role changed. Each signed-in connection holds its caller in one ConnectionCaller, which
// every operation and every delivery reads at the moment it runs; this registry keeps them up to
// date in two ways:
//   - at once, on the events port's callerChanged (published by the tokens and users services
//     after commit, on whichever instance made the change);
//   - as a safety net for what never reaches the port (a token revoked by the CLI in another
//     process, an expiry, events lost while Redis was away): once a second, while signed-in
//     connections are open, their tokens are checked again in one query by primary key, and at
//     once when the port reports that delivery resumed.
// An event may narrow a connection's caller (revoke, delete, demote) but never widen it: a wider role is taken
// from the database only, so an event forged on Redis can at worst close connections.
import type { FastifyBaseLogger } from 'fastify'
import { type Caller, type CurrentCallers, ROLES } from '../../core/caller.js'
import type { CallerChanged, CallerTopics } from '../../core/caller-changed.js'
import type { Events } from '../../events/events.js'

/** How often the tokens of open signed-in connections are checked again. */
export const RIGHTS_SWEEP_INTERVAL_MS = 1000

/** Why a connection lost its caller: it ends with UNAUTHENTICATED. */
export const REVOKED_MESSAGE = 'The token is invalid, expired or revoked'

/** The caller of one long-lived connection, as it stands now. */
export interface ConnectionCaller {
  /** Whom the connection acts for now; null once revoked (nothing more runs as them). */
  readonly caller: Caller | null
  readonly revoked: boolean
  /** The caller as the token resolves now (re-authentication on use). */
  update(caller: Caller): void
  /** The token no longer holds: the connection is ended (once). */
  revoke(): void
  /** The connection closed: stop watching it. */
  release(): void
}

export interface ConnectionRightsOptions {
  events: Pick<Events<CallerTopics>, 'subscribe'>
  /** The tokens' callers as they stand now (the tokens service's activeCallers). */
  currentCallers: CurrentCallers
  log: FastifyBaseLogger
  /** @default RIGHTS_SWEEP_INTERVAL_MS */
  sweepIntervalMs?: number
}

const rank = (caller: Caller) => ROLES.indexOf(caller.role)

export class ConnectionRights {
  private readonly byToken = new Map<number, Set<FollowedCaller>>()
  private readonly byUser = new Map<number, Set<FollowedCaller>>()
  private readonly unsubscribe: () => void
  private timer: NodeJS.Timeout | undefined
  private sweeping: Promise<void> | undefined
  private sweepAgain = false
  /** Connections ended because their caller lost the right, for tests and logs. */
  revocations = 0

  constructor(private readonly options: ConnectionRightsOptions) {
    this.unsubscribe = options.events.subscribe('callerChanged', (event) => this.heard(event), {
      // Changes published while delivery was down never arrive: check every token now.
      onResumed: () => void this.sweep(),
    })
  }

  /** Signed-in connections followed now. */
  get size(): number {
    let size = 0
    for (const followed of this.byToken.values()) size += followed.size
    return size
  }

  /**
   * Follows the caller of a connection opened by `caller`; `onRevoked` ends the connection
   * (WebSocket 4401, event stream with an UNAUTHENTICATED error). An anonymous connection has
   * nothing to lose: its caller is fixed and unwatched.
   */
  follow(caller: Caller | null, onRevoked: () => void): ConnectionCaller {
    const followed = new FollowedCaller(caller, this, onRevoked)
    if (caller !== null) this.watch(followed, caller)
    return followed
  }

  /** Checks every watched token against the database now (one query per 1,000 tokens). */
  sweep(): Promise<void> {
    if (this.sweeping !== undefined) {
      // One at a time; a request during one runs once more after it, with the newest connections.
      this.sweepAgain = true
      return this.sweeping
    }
    this.sweeping = this.check([...this.byToken.keys()]).finally(() => {
      this.sweeping = undefined
      if (this.sweepAgain) {
        this.sweepAgain = false
        void this.sweep()
      }
    })
    return this.sweeping
  }

  close(): void {
    this.unsubscribe()
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** @internal */
  watch(followed: FollowedCaller, caller: Caller): void {
    add(this.byToken, caller.tokenId, followed)
    add(this.byUser, caller.userId, followed)
    // Costs nothing while no signed-in connection is open.
    this.timer ??= setInterval(() => void this.sweep(), this.options.sweepIntervalMs ?? RIGHTS_SWEEP_INTERVAL_MS).unref()
  }

  /** @internal */
  unwatch(followed: FollowedCaller, caller: Caller): void {
    remove(this.byToken, caller.tokenId, followed)
    remove(this.byUser, caller.userId, followed)
    if (this.byToken.size === 0) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  private heard(event: CallerChanged): void {
    switch (event.change) {
      case 'token-revoked':
        for (const followed of [...(this.byToken.get(event.tokenId) ?? [])]) if (followed.caller?.userId === event.userId) this.revoke(followed)
        return
      case 'user-deleted':
        for (const followed of [...(this.byUser.get(event.userId) ?? [])]) this.revoke(followed)
        return
      case 'role-changed': {
        const ofUser = [...(this.byUser.get(event.userId) ?? [])]
        let widens = false
        for (const followed of ofUser) {
          const caller = followed.caller
          if (caller === null) continue
          const changed = { ...caller, role: event.role }
          if (rank(changed) < rank(caller)) followed.update(changed)
          else if (rank(changed) > rank(caller)) widens = true
        }
        // A wider role is believed from the database only.
        if (widens) void this.check(ofUser.flatMap((followed) => (followed.caller === null ? [] : [followed.caller.tokenId])))
        return
      }
    }
  }

  /** The tokens' callers as the database has them now; a token no longer live ends its connections. */
  private async check(tokenIds: number[]): Promise<void> {
    if (tokenIds.length === 0) return
    let current: Map<number, Caller>
    try {
      current = await this.options.currentCallers(tokenIds)
    } catch (error) {
      // The database is away: the connections can do nothing meanwhile; checked on the next tick.
      this.options.log.warn({ err: error }, 'could not check the tokens of open connections')
      return
    }
    for (const tokenId of tokenIds) {
      const now = current.get(tokenId)
      for (const followed of [...(this.byToken.get(tokenId) ?? [])]) {
        if (now === undefined) this.revoke(followed)
        else if (followed.caller !== null && followed.caller.role !== now.role) followed.update(now)
      }
    }
  }

  private revoke(followed: FollowedCaller): void {
    if (followed.revoked) return
    this.revocations++
    followed.revoke()
  }
}

class FollowedCaller implements ConnectionCaller {
  revoked = false
  private released = false

  constructor(
    private current: Caller | null,
    private readonly rights: ConnectionRights,
    private readonly onRevoked: () => void,
  ) {}

  get caller(): Caller | null {
    return this.current
  }

  update(caller: Caller): void {
    if (this.revoked || this.released || this.current === null) return
    if (caller.tokenId !== this.current.tokenId || caller.userId !== this.current.userId) return
    this.current = caller
  }

  revoke(): void {
    if (this.revoked) return
    this.revoked = true
    this.release()
    this.current = null
    this.onRevoked()
  }

  release(): void {
    if (this.released) return
    this.released = true
    if (this.current !== null) this.rights.unwatch(this, this.current)
  }
}

function add<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key)
  if (set === undefined) map.set(key, (set = new Set()))
  set.add(value)
}

function remove<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key)
  if (set === undefined) return
  set.delete(value)
  if (set.size === 0) map.delete(key)
}
