// Password hashing stays off the event loop and bounded: scrypt runs on libuv's thread pool, at
// most MAX_CONCURRENT_DERIVATIONS at once, the rest queued per lane and served in turn, and past
// the queue refused with 503 and Retry-After. Cheap stored hashes (N=2^10, r=1, p=1: verifyPassword
// takes the cost from the stored form) fill the queue without spending seconds of CPU.
import { randomBytes, scryptSync } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import {
  createDerivationGate,
  hashPassword,
  MAX_CONCURRENT_DERIVATIONS,
  MAX_QUEUED_DERIVATIONS,
  passwordHashingStats,
  verifyPassword,
} from '../../src/users/passwords.js'

/** A stored hash of `password` at a cost of about a millisecond. */
function cheapHash(password: string): string {
  const salt = randomBytes(16)
  const key = scryptSync(password, salt, 64, { N: 1024, r: 1, p: 1 })
  return ['scrypt', 1024, 1, 1, salt.toString('base64'), key.toString('base64')].join('$')
}

describe('password hashing', () => {
  it('hashes at the cost it is given, and checks a hash at the cost it was made with', async () => {
    const cheap = await hashPassword('correct horse', undefined, 1024)
    expect(cheap).toMatch(/^scrypt\$1024\$8\$5\$/)
    expect(await hashPassword('correct horse')).toMatch(/^scrypt\$16384\$8\$5\$/)
    expect(await verifyPassword('correct horse', cheap)).toBe(true)
    expect(await verifyPassword('wrong horse', cheap)).toBe(false)
  })

  it('derives on the thread pool: the event loop keeps turning while four derivations run', async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const started = performance.now()
    const stored = await Promise.all([1, 2, 3, 4].map((n) => hashPassword(`password ${n}`)))
    const elapsedMs = performance.now() - started
    delay.disable()
    const worstStallMs = delay.max / 1e6
    console.log(`4 derivations in ${elapsedMs.toFixed(0)} ms; the event loop stalled ${worstStallMs.toFixed(1)} ms at worst`)
    expect(await verifyPassword('password 1', stored[0]!)).toBe(true)
    expect(await verifyPassword('password 2', stored[0]!)).toBe(false)
    // On the main thread, one derivation alone (~250 ms, two at a time here) would stall it for its whole length.
    expect(worstStallMs).toBeLessThan(elapsedMs / 4)
  })

  it(`runs at most ${MAX_CONCURRENT_DERIVATIONS} at once, queues ${MAX_QUEUED_DERIVATIONS}, and refuses more with 503 and Retry-After`, async () => {
    const stored = cheapHash('secret')
    const before = passwordHashingStats()
    const extra = 5
    const checks = Array.from({ length: MAX_CONCURRENT_DERIVATIONS + MAX_QUEUED_DERIVATIONS + extra }, () =>
      verifyPassword('secret', stored, 'flood').then(
        (valid) => ({ valid }),
        (error: unknown) => ({ error }),
      ),
    )
    // Every call has been admitted, queued or refused by now (refusals do not wait for a thread).
    const during = passwordHashingStats()
    expect(during.running).toBe(MAX_CONCURRENT_DERIVATIONS)
    expect(during.queued).toBe(MAX_QUEUED_DERIVATIONS)
    const outcomes = await Promise.all(checks)
    const refused = outcomes.flatMap((outcome) => ('error' in outcome ? [outcome.error] : []))
    expect(refused).toHaveLength(extra)
    for (const error of refused) {
      expect(error).toBeInstanceOf(AppError)
      expect((error as AppError).code).toBe('SERVICE_UNAVAILABLE')
      expect((error as AppError).retryAfterS).toBeGreaterThanOrEqual(1)
    }
    expect(outcomes.filter((outcome) => 'valid' in outcome && outcome.valid)).toHaveLength(MAX_CONCURRENT_DERIVATIONS + MAX_QUEUED_DERIVATIONS)
    const after = passwordHashingStats()
    expect(after.derivations - before.derivations).toBe(MAX_CONCURRENT_DERIVATIONS + MAX_QUEUED_DERIVATIONS)
    expect(after.refused - before.refused).toBe(extra)
    expect(after).toMatchObject({ running: 0, queued: 0 })
  })

  it('gives a free thread to the lane with the fewest running: a lone check waits for one derivation of a flood to end, not for the flood', async () => {
    const gate = createDerivationGate()
    const admitted: string[] = []
    const finishers: (() => void)[] = []
    const work = (name: string) => () => {
      admitted.push(name)
      return new Promise<void>((resolve) => finishers.push(resolve))
    }
    const all = [...Array.from({ length: 6 }, (_, i) => gate.run('flood', work(`flood ${i}`))), gate.run('someone else', work('lone'))]
    const first = Array.from({ length: MAX_CONCURRENT_DERIVATIONS }, (_, i) => `flood ${i}`)
    expect(admitted).toEqual(first)
    finishers.shift()?.()
    await new Promise((resolve) => setImmediate(resolve))
    // The flood was served (and may still hold a thread), the lone lane never: it goes first
    // though it queued last, whether one thread or two are free for derivations.
    expect(admitted).toEqual([...first, 'lone'])
    while (finishers.length > 0) {
      finishers.shift()?.()
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all(all)
    expect(admitted).toHaveLength(7)
    expect(gate.stats()).toMatchObject({ running: 0, queued: 0, derivations: 7 })
  })
})
