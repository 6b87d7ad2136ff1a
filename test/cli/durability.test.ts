// Durability: a real `threadline serve` is killed with SIGKILL right after the last of 300
// acknowledged writes (eight writers at once); the database, opened again, holds every
// acknowledged write. Runs on SQLite and, in the postgres project, on PostgreSQL.
import { describe, expect, it } from 'vitest'
import { startServe, storedCommentsOnFirstPost, tokenFromCli } from '../helpers/serve-process.js'
import { freshDatabase } from '../helpers/test-store.js'

const WRITERS = 8
const ACKNOWLEDGED = 300

describe('durability', () => {
  it('keeps every acknowledged write through a SIGKILL right after the last one', { timeout: 60_000 }, async () => {
    const fresh = await freshDatabase()
    const env = { DATABASE_URL: fresh.url, RATE_LIMIT_MAX: '1000000', RATE_LIMIT_AUTHENTICATED_MAX: '1000000' }
    const first = await startServe(env)
    try {
      const token = await tokenFromCli(fresh.url, 2)
      const killed = new Promise<NodeJS.Signals | null>((resolve) => first.child.on('exit', (_code, signal) => resolve(signal)))
      const acknowledged: string[] = []
      let stop = false
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, writer) => {
          for (let i = 0; !stop; i++) {
            const content = `writer ${writer}, write ${i}`
            try {
              const response = await fetch(`${first.address}/api/v1/users/1/posts/1/comments`, {
                method: 'POST',
                headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
                body: JSON.stringify({ content }),
              })
              if (response.status !== 201) throw new Error(`answered ${response.status}: ${await response.text()}`)
              // Answers already on their way when the process is killed are acknowledged writes too.
              acknowledged.push(content)
              if (acknowledged.length === ACKNOWLEDGED) {
                // At once, before any other answer is read.
                first.child.kill('SIGKILL')
                stop = true
              }
            } catch (error) {
              // The requests in flight when the process died fail; nothing else may.
              if (!stop) throw error
            }
          }
        }),
      )
      expect(await killed).toBe('SIGKILL')

      const stored = await storedCommentsOnFirstPost(fresh.url)
      expect(acknowledged.filter((content) => !stored.has(content))).toEqual([])
      // Besides them, at most the writes that were in flight (one per writer).
      const extra = [...stored].filter((content) => content.startsWith('writer ') && !acknowledged.includes(content))
      expect(extra.length).toBeLessThanOrEqual(WRITERS)
    } finally {
      first.child.kill('SIGKILL')
      await fresh.drop()
    }
  })
})
