// The scopes of withBeforeCommit (src/db/write-transaction.ts): a write transaction begun in one,
// however late, runs its hook before its commit; once every scope has ended, the asynchronous
// context is no longer tracked (Node's promise hooks, which slow every promise of the process,
// are off again) and a write runs no hook. A write of one statement commits on its own where the
// store allows it, and in a transaction when a scope asks for its hook. On the run's store, a real
// database.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { singleStatementWrite, tracksWriteScopes, withBeforeCommit, writeTransaction } from '../../src/db/write-transaction.js'
import { freshDatabase, TEST_STORE, type TestDatabase } from '../helpers/test-store.js'

let fresh: TestDatabase
let database: Database
beforeAll(async () => {
  fresh = await freshDatabase()
  database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }).database)
  await sql`create table scope_marks (id integer primary key, said text not null)`.execute(database.db)
})
afterAll(async () => {
  await database?.close()
  await fresh?.drop()
})

const marks = async (): Promise<string[]> =>
  (await sql<{ said: string }>`select said from scope_marks order by id`.execute(database.db)).rows.map((row) => row.said)
const mark = (said: string) => async (trx: Database['db']) => {
  await sql`insert into scope_marks (said) values (${said})`.execute(trx)
}
/** A write begun after a few turns of the event loop, as a handler's write begins after its reads. */
const lateWrite = async (said: string) => {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve))
  await writeTransaction(database.db, mark(said))
}

describe('the scopes of withBeforeCommit', () => {
  it('runs the hook in the writes begun in a scope, however late; after the last scope ends, nothing is tracked and no hook runs', async () => {
    await sql`delete from scope_marks`.execute(database.db)
    expect(tracksWriteScopes()).toBe(false)

    let first!: Promise<void>
    let second!: Promise<void>
    const endFirst = withBeforeCommit(mark('hook of the first'), () => void (first = lateWrite('write of the first')))
    const endSecond = withBeforeCommit(mark('hook of the second'), () => void (second = lateWrite('write of the second')))
    expect(tracksWriteScopes()).toBe(true)
    await first
    endFirst()
    // The second scope is still open: its late write still runs its own hook.
    expect(tracksWriteScopes()).toBe(true)
    await second
    endSecond()
    endSecond() // ending twice counts once
    expect(tracksWriteScopes()).toBe(false)

    await writeTransaction(database.db, mark('a write outside any scope'))
    expect(await marks()).toEqual(['write of the first', 'hook of the first', 'write of the second', 'hook of the second', 'a write outside any scope'])

    // A scope opened again tracks again.
    const endThird = withBeforeCommit(mark('hook of the third'), () => undefined)
    expect(tracksWriteScopes()).toBe(true)
    withBeforeCommit(mark('hook of the fourth'), () => undefined)()
    await writeTransaction(database.db, mark('a write outside, while another scope is open'))
    endThird()
    expect(tracksWriteScopes()).toBe(false)
    expect((await marks()).slice(5)).toEqual(['a write outside, while another scope is open'])
  })

  it('stops tracking once the last scope ended: a write its context begins later runs no hook', async () => {
    await sql`delete from scope_marks`.execute(database.db)
    let signal!: () => void
    const later = new Promise<void>((resolve) => (signal = resolve))
    let lingering!: Promise<void>
    const end = withBeforeCommit(mark('hook of an ended scope'), () => {
      lingering = later.then(() => writeTransaction(database.db, mark('a write begun after its scope ended')))
    })
    end()
    signal()
    await lingering
    expect(await marks()).toEqual(['a write begun after its scope ended'])
  })

  it('ends the scope when what it runs throws at once', () => {
    expect(() =>
      withBeforeCommit(mark('never'), () => {
        throw new Error('refused before any write')
      }),
    ).toThrow('refused before any write')
    expect(tracksWriteScopes()).toBe(false)
  })
})

describe('a write of one statement (singleStatementWrite)', () => {
  /** The statements and transaction steps `write` sends, as the statement observer is told of them. */
  const stepsOf = async (write: () => Promise<unknown>): Promise<string[]> => {
    const steps: string[] = []
    database.observeStatements((text) => {
      steps.push(text.split(' ')[0]!.toLowerCase())
      return () => {}
    })
    await write()
    return steps
  }

  /** A write of `said` that tells what it wrote, as an update returns its row. */
  const written = (said: string) => async (trx: Database['db']) => {
    await mark(said)(trx)
    return said
  }

  it('commits on its own where the store allows it, else in a transaction; a scope’s hook commits with it', async () => {
    await sql`delete from scope_marks`.execute(database.db)
    const alone = TEST_STORE === 'sqlite'
    expect(await stepsOf(() => singleStatementWrite(database.db, written('alone')))).toEqual(alone ? ['insert'] : ['begin', 'insert', 'commit'])

    let scoped!: Promise<unknown>
    const end = withBeforeCommit(mark('its hook'), () => void (scoped = singleStatementWrite(database.db, written('in a scope'))))
    const steps = await stepsOf(() => scoped)
    end()
    expect(steps.filter((step) => step === 'begin' || step === 'commit')).toEqual(['begin', 'commit'])

    // Given a write transaction, it runs in it, and rolls back with it.
    const failed = writeTransaction(database.db, async (trx) => {
      await singleStatementWrite(trx, written('rolled back'))
      throw new Error('refused after the write')
    })
    await expect(failed).rejects.toThrow('refused after the write')
    expect(await marks()).toEqual(['alone', 'in a scope', 'its hook'])
  })

  it('rolls back a write that says it wrote nothing, in a scope, without its hook', async () => {
    await sql`delete from scope_marks`.execute(database.db)
    let scoped!: Promise<unknown>
    const end = withBeforeCommit(
      mark('a hook that must not run'),
      () => void (scoped = singleStatementWrite(database.db, async (trx) => void (await mark('undone')(trx)))),
    )
    expect(await scoped).toBeUndefined()
    end()
    expect(await marks()).toEqual([])
  })
})
