// The client's retry rules on answers a live server does not give on demand (503 with and without
// Retry-After, retries running out, no answer at all) and the keys of its writes, over a fetch that
// answers from a script.
import { describe, expect, it } from 'vitest'
import { createClientFetch, parseRetryAfter } from '../../src/client/client-fetch.js'

/** Answers from a script, in order; an Error in it is thrown instead, as fetch does when no answer came. */
function scripted(answers: (Response | Error)[]) {
  const seen: string[] = []
  const keys: (string | null)[] = []
  const fetch = (async (input: RequestInfo | URL) => {
    seen.push(input instanceof Request ? input.method : 'GET')
    keys.push(input instanceof Request ? input.headers.get('Idempotency-Key') : null)
    const next = answers.shift()
    if (next === undefined) throw new Error('no more answers')
    if (next instanceof Error) throw next
    return next
  }) as typeof globalThis.fetch
  return { fetch, seen, keys }
}

const noAnswer = () => new TypeError('fetch failed')

const answer = (status: number, headers: Record<string, string> = {}) => new Response(status === 204 ? null : '{}', { status, headers })

describe('the client fetch', () => {
  it('retries a 503 with Retry-After after that many seconds, and succeeds', async () => {
    const { fetch, seen } = scripted([answer(503, { 'Retry-After': '2' }), answer(200)])
    const waits: number[] = []
    const clientFetch = createClientFetch({ fetch, maxRetries: 3, etagCache: false, sleep: async (ms) => void waits.push(ms) })
    expect((await clientFetch(new Request('http://x/api/v1/users'))).status).toBe(200)
    expect({ requests: seen.length, waits }).toEqual({ requests: 2, waits: [2000] })
  })

  it('does not retry a 503 without Retry-After', async () => {
    const { fetch, seen } = scripted([answer(503), answer(200)])
    const clientFetch = createClientFetch({ fetch, maxRetries: 3, etagCache: false, sleep: async () => undefined })
    expect((await clientFetch(new Request('http://x/api/v1/users'))).status).toBe(503)
    expect(seen.length).toBe(1)
  })

  it('gives up after maxRetries retries of a 429 and returns the last answer', async () => {
    const { fetch, seen } = scripted([
      answer(429, { 'Retry-After': '1' }),
      answer(429, { 'Retry-After': '1' }),
      answer(429, { 'Retry-After': '1' }),
      answer(200),
    ])
    const clientFetch = createClientFetch({ fetch, maxRetries: 2, etagCache: false, sleep: async () => undefined })
    expect((await clientFetch(new Request('http://x/api/v1/users', { method: 'POST', body: '{"a":1}' }))).status).toBe(429)
    expect(seen).toEqual(['POST', 'POST', 'POST'])
  })

  it('sends each write with a key of its own, the same on each of its retries', async () => {
    let made = 0
    const { fetch, keys } = scripted([answer(429, { 'Retry-After': '1' }), answer(201), answer(200), answer(204)])
    const clientFetch = createClientFetch({ fetch, maxRetries: 3, etagCache: false, sleep: async () => undefined, newIdempotencyKey: () => `key-${++made}` })
    expect((await clientFetch(new Request('http://x/api/v1/users', { method: 'POST', body: '{}' }))).status).toBe(201)
    expect((await clientFetch(new Request('http://x/api/v1/users/1'))).status).toBe(200)
    expect((await clientFetch(new Request('http://x/api/v1/users/1', { method: 'DELETE', headers: { 'Idempotency-Key': 'mine' } }))).status).toBe(204)
    expect(keys).toEqual(['key-1', 'key-1', null, 'mine'])
  })

  it('retries a write that got no answer, or a 409 while its first attempt runs, with its key; waits longer each time', async () => {
    const { fetch, keys } = scripted([noAnswer(), noAnswer(), answer(409, { 'Retry-After': '1' }), answer(201)])
    const waits: number[] = []
    const clientFetch = createClientFetch({ fetch, maxRetries: 3, etagCache: false, sleep: async (ms) => void waits.push(ms) })
    expect((await clientFetch(new Request('http://x/api/v1/users', { method: 'POST', body: '{}' }))).status).toBe(201)
    expect(new Set(keys).size).toBe(1)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(waits).toEqual([250, 500, 1000])
  })

  it('does not retry a 409 without Retry-After (a conflict with the data), and throws once retries are spent', async () => {
    const conflict = scripted([answer(409), answer(201)])
    const once = createClientFetch({ fetch: conflict.fetch, maxRetries: 3, etagCache: false, sleep: async () => undefined })
    expect((await once(new Request('http://x/api/v1/users', { method: 'POST', body: '{}' }))).status).toBe(409)
    const down = scripted([noAnswer(), noAnswer()])
    const spent = createClientFetch({ fetch: down.fetch, maxRetries: 1, etagCache: false, sleep: async () => undefined })
    await expect(spent(new Request('http://x/api/v1/users'))).rejects.toThrow('fetch failed')
    expect(down.seen).toEqual(['GET', 'GET'])
  })

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-26T00:00:00Z')
    expect(parseRetryAfter('3', now)).toBe(3)
    expect(parseRetryAfter('Thu, 26 Nov 2026 00:00:05 GMT', now)).toBe(5)
    expect(parseRetryAfter(null, now)).toBeUndefined()
    expect(parseRetryAfter('soon', now)).toBeUndefined()
  })
})
