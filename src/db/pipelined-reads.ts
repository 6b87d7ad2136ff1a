// The direct reads on PostgreSQL (direct-reads.ts), pipelined: sent on a few connections of their
// own in `pg`'s pipeline mode, each read written as it comes rather than after the one before it
// on its connection is answered, and every read of one turn of the event loop written to its
// connection in one write. Through the pool, each read took a connection of its own, one write
// and one wakeup of that connection's backend: those system calls were a third of the process's
// CPU on GET one user. 50 reads at a time of one user by id, `pg` alone: 33 µs of the process's
// CPU a read through a pool of 10, 13 µs pipelined on one connection with a turn's reads written
// together (docs/performance.md).
//
// PostgreSQL answers a connection's statements in the order they were sent, each up to its own
// Sync, so a read that fails fails alone. A read waits behind those sent before it on its
// connection: each goes to the connection with the fewest unanswered, and the transactions (the
// writes) keep the pool's connections. A connection held by a slow statement (nothing answered on
// it for STALLED_MS while reads wait) is passed over, and when every one is held so, the read runs
// on the pool as it did before: a quick read waits behind a slow one for about STALLED_MS at
// most, not for every slow read queued on its connection. A connection that breaks fails the
// reads on it (answered 503, as the pool's) and is opened anew by the next read.
import type { Writable } from 'node:stream'
import type pgModule from 'pg'
import { AppError } from '../errors.js'

/** Runs a read on a connection; `retire` closes that connection once its reads are answered (its prepared statements went stale). */
export type PipelinedRead<T> = (client: pgModule.ClientBase, retire: () => void) => Promise<T>

/** Runs a read elsewhere (on the pool) when every pipelined connection is held by a slow statement. */
export type Overflow = <T>(read: PipelinedRead<T>) => Promise<T>

/**
 * How long a connection with reads waiting may go without answering any before it is taken to be
 * held by a slow statement (a search, a count over many rows): as long as the fair scheduler takes
 * a slot to be slow. Under load a connection answers every few tens of microseconds, and a queue
 * of pages with their counts one every few milliseconds: at 5 ms, 4% of the reads of a load of v1
 * pages went to the pool, at 10 ms under 1.5%.
 */
export const STALLED_MS = 10

export interface PipelinedReads {
  run<T>(read: PipelinedRead<T>): Promise<T>
  /** Ends every connection once what was sent on it is answered. */
  close(): Promise<void>
}

interface Lane {
  /** The lane's connection, from the moment it is made until it breaks or is retired. */
  current: pgModule.Client | undefined
  /** The same, once connected. */
  client: pgModule.Client | undefined
  /** The connection being opened (or open), which every read waits for. */
  opening: Promise<pgModule.Client> | undefined
  /** Reads sent or waiting on this lane, not yet answered. */
  unanswered: number
  /** When the lane last answered a read, or was given one with none waiting (performance.now()). */
  progressAt: number
}

/**
 * `lanes` connections made by `connect` (a client in pipeline mode, ready to be connected), each
 * opened by the first read that needs it; `overflow` runs the reads none of them should take now.
 */
export function pipelinedReads(connect: () => pgModule.Client, lanes: number, overflow: Overflow): PipelinedReads {
  const all: Lane[] = Array.from({ length: lanes }, () => ({ current: undefined, client: undefined, opening: undefined, unanswered: 0, progressAt: 0 }))
  const corked = new Set<Writable>()
  let closing = false

  const retire = (lane: Lane, client: pgModule.Client) => {
    if (lane.current !== client) return
    lane.current = undefined
    lane.client = undefined
    lane.opening = undefined
  }
  const open = (lane: Lane): Promise<pgModule.Client> => {
    const client = connect()
    lane.current = client
    // A broken connection fails its reads on its own; its 'error' would end the process unheard.
    client.on('error', () => retire(lane, client))
    client.on('end', () => retire(lane, client))
    const opening = client.connect().then(
      () => {
        if (lane.current === client) lane.client = client
        // The reads that waited for it are sent now: their wait so far was the connection's making.
        lane.progressAt = performance.now()
        return client
      },
      (error: unknown) => {
        retire(lane, client)
        throw error
      },
    )
    lane.opening = opening
    return opening
  }
  /** The lane with the fewest reads waiting of those not held by a slow statement; undefined when all are. */
  const laneFor = (now: number): Lane | undefined => {
    let chosen: Lane | undefined
    for (const lane of all) {
      if (lane.unanswered > 0 && now - lane.progressAt > STALLED_MS) continue
      if (chosen === undefined || lane.unanswered < chosen.unanswered) chosen = lane
    }
    return chosen
  }
  /** This turn's reads on `client` leave in one write, once the loop has run what it had to run (its check phase). */
  const writeWithTheTurn = (client: pgModule.Client) => {
    const { stream } = (client as unknown as { connection: { stream: Writable } }).connection
    if (corked.has(stream)) return
    if (corked.size === 0) setImmediate(uncorkAll)
    stream.cork()
    corked.add(stream)
  }
  const uncorkAll = () => {
    for (const stream of corked) stream.uncork()
    corked.clear()
  }

  return {
    async run<T>(read: PipelinedRead<T>): Promise<T> {
      // A request that came in while the server shuts down: as if the database were out of reach.
      if (closing) throw new AppError('SERVICE_UNAVAILABLE', 'The database cannot be reached; retry in a moment')
      const now = performance.now()
      const lane = laneFor(now)
      if (lane === undefined) return overflow(read)
      if (lane.unanswered++ === 0) lane.progressAt = now
      try {
        const client = lane.client ?? (await (lane.opening ?? open(lane)))
        writeWithTheTurn(client)
        return await read(client, () => {
          retire(lane, client)
          client.end().catch(() => {})
        })
      } finally {
        lane.unanswered--
        lane.progressAt = performance.now()
      }
    },
    async close() {
      closing = true
      uncorkAll()
      await Promise.all(
        all.map(async (lane) => {
          const client = lane.current
          if (client === undefined) return
          retire(lane, client)
          await client.end().catch(() => {})
        }),
      )
    },
  }
}
