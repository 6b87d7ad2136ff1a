// PostgreSQL stopped and started again under load, on a server of the test's own: a real
// `threadline serve` answers 503 with Retry-After while it is away (never a 500, never a dropped
// connection), is not ready meanwhile but stays alive, serves again without a restart once it is
// back, and has lost no acknowledged write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canRunPrivatePostgres, PrivatePostgres } from '../helpers/private-postgres.js'
import { type ServeProcess, commentsOnFirstPost, startServe, tokenFromCli } from '../helpers/serve-process.js'
import { until } from '../helpers/until.js'

const WRITERS = 4

describe.skipIf(!canRunPrivatePostgres())('PostgreSQL outage under load', () => {
  let pg: PrivatePostgres
  let serve: ServeProcess
  beforeAll(async () => {
    pg = await PrivatePostgres.create()
    await pg.start()
    serve = await startServe({ DATABASE_URL: pg.url, RATE_LIMIT_MAX: '1000000', RATE_LIMIT_AUTHENTICATED_MAX: '1000000', READY_TIMEOUT_MS: '500' })
  }, 60_000)
  afterAll(async () => {
    await serve?.stop()
    await pg?.destroy()
  })

  it('answers 503 with Retry-After while it is away, recovers without a restart, and loses no acknowledged write', async () => {
    const token = await tokenFromCli(pg.url, 2)
    const acknowledged: string[] = []
    const answers: { status: number; retryAfter: string | null; phase: string }[] = []
    const failures: string[] = []
    let phase = 'before'
    let writing = true
    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      for (let i = 0; writing; i++) {
        const content = `writer ${writer}, write ${i}`
        try {
          const response = await fetch(`${serve.address}/api/v1/users/1/posts/1/comments`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ content }),
          })
          answers.push({ status: response.status, retryAfter: response.headers.get('retry-after'), phase })
          if (response.status === 201) acknowledged.push(content)
          await response.arrayBuffer()
        } catch (error) {
          failures.push(String(error))
        }
        if (phase === 'away') await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })
    await until(() => acknowledged.length >= 50, 15_000)

    phase = 'away'
    await pg.stop()
    const awayAt = answers.length
    await until(() => answers.slice(awayAt).filter((a) => a.status === 503).length >= 8, 20_000)
    const ready = await fetch(`${serve.address}/ready`)
    expect(ready.status).toBe(503)
    expect((await ready.json()) as unknown).toMatchObject({ status: 'unavailable', checks: { database: { status: 'down' } } })
    expect((await fetch(`${serve.address}/health`)).status).toBe(200)

    await pg.start()
    phase = 'back'
    const backAt = acknowledged.length
    await until(() => acknowledged.length >= backAt + 50, 20_000)
    writing = false
    await Promise.all(writers)

    // While it was away: 503 with Retry-After, nothing else; before and after: written.
    const away = answers.filter((a) => a.phase === 'away')
    expect(away.filter((a) => a.status !== 503 && a.status !== 201)).toEqual([])
    expect(away.filter((a) => a.status === 503 && a.retryAfter === null)).toEqual([])
    expect(answers.filter((a) => a.status !== 201 && a.status !== 503)).toEqual([])
    expect(failures).toEqual([])
    expect((await fetch(`${serve.address}/ready`)).status).toBe(200)
    expect(serve.child.exitCode).toBeNull()

    const stored = await commentsOnFirstPost(serve.address)
    expect(acknowledged.filter((content) => !stored.has(content))).toEqual([])
  }, 90_000)
})
