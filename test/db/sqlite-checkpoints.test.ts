// While the server writes to SQLite, its WAL is copied into the database file by a thread of its own,
// not by the serving connection's commits on the event loop (src/db/sqlite-checkpoints.ts).
import { openSync, readSync, closeSync } from 'node:fs'
import SqliteDatabase from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openDatabase, SERVING_PAGE_CACHE_KIB } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { backgroundCheckpoints } from '../../src/db/sqlite-checkpoints.js'
import { freshSqliteFile, sqlitePath, type TestDatabase } from '../helpers/test-store.js'

/** The WAL's frames and how many of them are in the database file, from the WAL index (the -shm file's header: mxFrame, nBackfill). */
function walProgress(path: string): { frames: number; backfilled: number } {
  const fd = openSync(`${path}-shm`, 'r')
  try {
    const header = Buffer.alloc(100)
    readSync(fd, header, 0, 100, 0)
    return { frames: header.readUInt32LE(16), backfilled: header.readUInt32LE(96) }
  } finally {
    closeSync(fd)
  }
}

const threshold = (connection: SqliteDatabase.Database) => connection.pragma('wal_autocheckpoint', { simple: true })

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

let temp: TestDatabase | undefined
afterEach(async () => {
  await temp?.drop()
  temp = undefined
})

describe('checkpoints beside the serving connection', () => {
  it("copies what a serving handle commits into the database file on another thread, the handle's own checkpoints held back", async () => {
    temp = freshSqliteFile()
    const config = loadConfig({ DATABASE_URL: temp.url })
    const path = sqlitePath(config.database)
    const database = openDatabase(config.database, { pageCacheKib: SERVING_PAGE_CACHE_KIB, checkpointInBackground: Promise.resolve() })
    try {
      await migrateToLatest(database)
      for (let i = 0; i < 200; i++) {
        await database.db
          .insertInto('users')
          .values({ name: `U${i}`, email: `u${i}@example.com`, role: 'user', created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:00:00.000Z' })
          .execute()
      }
      // Fewer pages than the serving connection's threshold: only the thread can have copied them.
      const { frames } = walProgress(path)
      expect(frames).toBeGreaterThan(100)
      expect(frames).toBeLessThan(10_000)
      await until(() => walProgress(path).backfilled >= frames)
    } finally {
      await database.close()
    }
  })

  it('raises the connection’s threshold while the thread runs, from when it is told, and puts it back when the thread ends or fails', async () => {
    temp = freshSqliteFile()
    const path = sqlitePath(loadConfig({ DATABASE_URL: temp.url }).database)
    const connection = new SqliteDatabase(path)
    const turn = () => new Promise((resolve) => setImmediate(resolve))
    try {
      connection.pragma('journal_mode = WAL')
      expect(threshold(connection)).toBe(1000)
      let listening = (): void => {}
      const checkpoints = backgroundCheckpoints(connection, path, new Promise<void>((resolve) => (listening = resolve)))
      // The start's own writes (migrations, demo data) keep SQLite's checkpoints.
      checkpoints.committed()
      await turn()
      expect(threshold(connection)).toBe(1000)
      listening()
      await turn()
      checkpoints.committed()
      expect(threshold(connection)).toBe(10_000)
      await checkpoints.close()
      expect(threshold(connection)).toBe(1000)

      // A thread that cannot open the file ends at once: SQLite's own checkpoints are back, and stay.
      const failing = backgroundCheckpoints(connection, `${path}-missing-dir/none/test.db`)
      await turn()
      failing.committed()
      expect(threshold(connection)).toBe(10_000)
      await until(() => threshold(connection) === 1000)
      failing.committed()
      expect(threshold(connection)).toBe(1000)
    } finally {
      connection.close()
    }
  })
})
