// Who hears the store's changes (changes.ts): the writes of this handle, told after their commit;
// on SQLite, another process's commit to the same file (PRAGMA data_version moved: everything);
// on PostgreSQL, the other instances' and the commands' writes, sent by NOTIFY in their
// transactions and heard on a connection of this handle's own, opened when a listener first asks
// whether it hears (a handle that nobody asks, such as a command's or a GraphQL-only app's, opens
// none). Until that connection listens, and while it is down, nothing is heard: `heard()` says
// so, and whoever keeps answers keeps none until it is back (then everything is told as changed).
import { CompiledQuery } from 'kysely'
import type pgModule from 'pg'
import { type Change, decodeChanges, encodeChanges, EVERYTHING } from './changes.js'
import type { ChangeSink } from './translating-dialect.js'

export type ChangeListener = (changes: readonly Change[]) => void

export interface ChangeFeed {
  /** Tells `listener` of every change committed from now on; returns how to stop. */
  listen(listener: ChangeListener): () => void
  /**
   * Whether every change is being heard. On SQLite it first looks for another process's commit
   * (and tells it as everything); on PostgreSQL it is false while the listening connection is down.
   */
  heard(): boolean
  /** Where the translating dialect tells the writes of the handles that share this feed. */
  readonly sink: ChangeSink
  close(): Promise<void>
}

/** A feed as another handle of the same process shares it: the first handle closes it. */
export const shared = (feed: ChangeFeed): ChangeFeed => ({ ...feed, close: async () => {} })

function listeners() {
  const all = new Set<ChangeListener>()
  return {
    all,
    tell: (changes: readonly Change[]) => {
      for (const listener of all) listener(changes)
    },
    add: (listener: ChangeListener) => {
      all.add(listener)
      return () => void all.delete(listener)
    },
  }
}

/** SQLite: this handle's writes, and another connection's commits as `externalVersion` (PRAGMA data_version) moves. */
export function sqliteChangeFeed(externalVersion: () => number): ChangeFeed {
  const { tell, add } = listeners()
  let seen = externalVersion()
  return {
    sink: { committed: tell },
    listen: add,
    heard: () => {
      const version = externalVersion()
      if (version !== seen) {
        seen = version
        tell([EVERYTHING])
      }
      return true
    },
    close: async () => {},
  }
}

/** How long the listening connection waits before it tries again, once lost. */
const RELISTEN_DELAY_MS = 1000

/** The channel of the connection's schema (instances of one schema hear each other; tests of other schemas do not). */
const CHANNEL_SQL = `'threadline_' || left(md5(current_schema()), 16)`

/**
 * PostgreSQL: this handle's writes, and every other writer's that runs Threadline's code (another
 * instance, the commands), heard through NOTIFY on `connect()`ed clients.
 */
export function postgresChangeFeed(connect: () => pgModule.Client): ChangeFeed {
  const { all, tell, add } = listeners()
  const origin = Math.random().toString(36).slice(2, 10)
  let client: pgModule.Client | undefined
  let listening = false
  let closed = false
  let retry: NodeJS.Timeout | undefined

  const lost = () => {
    if (client === undefined) return
    const old = client
    client = undefined
    old.removeAllListeners()
    old.on('error', () => {})
    void old.end().catch(() => undefined)
    if (listening) {
      listening = false
      tell([EVERYTHING])
    }
    if (!closed) {
      retry = setTimeout(() => {
        retry = undefined
        start()
      }, RELISTEN_DELAY_MS)
      retry.unref()
    }
  }

  function start(): void {
    if (closed || client !== undefined) return
    const c = connect()
    client = c
    c.on('error', lost)
    c.on('end', lost)
    c.on('notification', (message) => {
      const { origin: from, changes } = decodeChanges(message.payload ?? '')
      if (from !== origin) tell(changes)
    })
    void (async () => {
      await c.connect()
      const { rows } = await c.query<{ channel: string }>(`select ${CHANNEL_SQL} as channel`)
      await c.query(`listen "${rows[0]!.channel}"`)
      if (client !== c) return
      listening = true
      // Whatever was written while nobody listened.
      tell([EVERYTHING])
    })().catch(() => {
      if (client === c) lost()
    })
  }

  return {
    sink: {
      committed: tell,
      announce: (changes) => CompiledQuery.raw(`select pg_notify(${CHANNEL_SQL}, $1)`, [encodeChanges(origin, changes)]),
      // Two statements in one simple query (no parameters): the NOTIFY is in the transaction, so it is
      // delivered at the commit and only if it commits. The payload is our own text (origin, table
      // names, ids), its quotes doubled all the same.
      announceAndCommit: (changes) => CompiledQuery.raw(`select pg_notify(${CHANNEL_SQL}, '${encodeChanges(origin, changes).replaceAll("'", "''")}'); commit`),
    },
    listen: add,
    heard: () => {
      if (!listening && client === undefined && retry === undefined && all.size > 0) start()
      return listening
    },
    close: async () => {
      closed = true
      clearTimeout(retry)
      const c = client
      client = undefined
      listening = false
      if (c !== undefined) {
        c.removeAllListeners()
        c.on('error', () => {})
        // Not awaited: nothing depends on the server's goodbye, and the handle's pool closes meanwhile.
        void c.end().catch(() => undefined)
      }
    },
  }
}
