// Compression of answers (src/http/compression.ts): our own onSend hook, which passes untouched
// every answer it does not compress, and compresses the others as @fastify/compress did.
import { Readable } from 'node:stream'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registerCompression } from '../../src/http/compression.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const decode = (encoding: unknown, body: Buffer): Buffer => {
  if (encoding === 'br') return brotliDecompressSync(body)
  if (encoding === 'gzip') return gunzipSync(body)
  return body
}
const varyNames = (vary: unknown): string[] =>
  String(vary)
    .split(',')
    .map((name) => name.trim().toLowerCase())

describe('compression of the API answers', () => {
  let t: TestApp
  let firstId: number | string
  beforeAll(async () => {
    t = await buildTestApp({})
    for (let i = 0; i < 100; i++) {
      const user = await t.createUser({ name: `Filler ${i}`, email: `filler${i}@example.com` })
      if (i === 0) firstId = user.id
    }
  })
  afterAll(() => t.close())

  const list = (headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url: '/users?limit=100', headers })

  it.each([
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0.9, gzip;q=0.8', 'br'],
    ['gzip, br', 'br'],
    ['gzip;q=0, *', 'br'],
    ['br;q=0, *;q=0.5', 'gzip'],
    ['x-gzip', 'gzip'],
    ['BR', 'br'],
  ])('Accept-Encoding: %s → %s', async (header, coding) => {
    const res = await list({ 'accept-encoding': header })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-encoding']).toBe(coding)
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length)
    expect(JSON.parse(decode(coding, res.rawPayload).toString()).data).toHaveLength(100)
  })

  it.each([[undefined], ['identity'], ['deflate'], ['br;q=0, gzip;q=0'], ['*;q=0'], ['']])('Accept-Encoding: %s → uncompressed', async (header) => {
    const res = await list(header === undefined ? {} : { 'accept-encoding': header })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length)
    expect(res.json().data).toHaveLength(100)
  })

  it('decompresses a large list to the JSON of the uncompressed answer, with the same ETag', async () => {
    const identity = await list()
    expect(identity.rawPayload.length).toBeGreaterThan(10_000)
    const plain = { ...identity.json(), meta: undefined }
    for (const coding of ['br', 'gzip']) {
      const res = await list({ 'accept-encoding': coding })
      expect(res.headers['content-encoding']).toBe(coding)
      expect(res.rawPayload.length).toBeLessThan(identity.rawPayload.length / 4)
      const { meta, ...decoded } = JSON.parse(decode(coding, res.rawPayload).toString())
      expect({ ...decoded, meta: undefined }).toEqual(plain)
      expect(meta).toEqual({ ...identity.json().meta, timestamp: meta.timestamp })
      expect(res.headers.etag).toBe(identity.headers.etag)
      expect(res.headers['last-modified']).toBe(identity.headers['last-modified'])
      expect(res.headers['content-type']).toBe(identity.headers['content-type'])
    }
  })

  it('names Accept-Encoding once in Vary', async () => {
    for (const headers of [{}, { 'accept-encoding': 'br' }, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
      const names = varyNames((await list(headers)).headers.vary)
      expect(names.filter((name) => name === 'accept-encoding')).toHaveLength(1)
      expect(names).toEqual(expect.arrayContaining(['accept', 'authorization']))
    }
  })

  it('leaves answers under 1 KiB alone', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/users/${firstId}`, headers: { 'accept-encoding': 'br, gzip' } })
    expect(res.statusCode).toBe(200)
    expect(res.rawPayload.length).toBeLessThan(1024)
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.json().data.id).toBe(firstId)
  })

  it('answers HEAD with the uncompressed length and no body', async () => {
    const identity = await list()
    const head = await list({ 'accept-encoding': 'br, gzip' }, 'HEAD')
    expect(head.statusCode).toBe(200)
    expect(head.headers['content-encoding']).toBeUndefined()
    expect(Number(head.headers['content-length'])).toBe(identity.rawPayload.length)
    expect(head.rawPayload.length).toBe(0)
  })

  it('leaves a 304 untouched', async () => {
    const identity = await list()
    const res = await list({ 'accept-encoding': 'br', 'if-none-match': identity.headers.etag as string })
    expect(res.statusCode).toBe(304)
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.headers.etag).toBe(identity.headers.etag)
    expect(res.rawPayload.length).toBe(0)
  })

  it('compresses the text answers too (the GraphQL schema)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql', headers: { 'accept-encoding': 'gzip' } })
    const identity = await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql' })
    expect(res.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(res.rawPayload).toString()).toBe(identity.body)
  })
})

describe('the compression hook', () => {
  const big = `{"items":[${Array.from({ length: 300 }, (_, i) => `"item ${i}"`).join(',')}]}`
  let app: FastifyInstance
  beforeAll(async () => {
    app = Fastify()
    await registerCompression(app)
    const text = (type: string) => async (_request: unknown, reply: FastifyReply) => reply.type(type).send('data: event\n\n'.repeat(200))
    app.get('/events', text('text/event-stream'))
    app.get('/plain', text('text/plain; charset=utf-8'))
    app.get('/yaml', text('application/yaml'))
    app.get('/svg', text('image/svg+xml'))
    app.get('/js', text('text/javascript; charset=utf-8'))
    app.get('/problem', async (_request, reply) => reply.code(404).type('application/problem+json').send(big))
    app.get('/graphql-response', async (_request, reply) => reply.type('application/graphql-response+json; charset=utf-8').send(big))
    app.get('/png', async (_request, reply) => reply.type('image/png').send(Buffer.alloc(4096, 1)))
    app.get('/untyped', async (_request, reply) => reply.send(Buffer.from(big)))
    app.get('/encoded', async (_request, reply) => reply.header('content-encoding', 'gzip').type('application/json').send(Buffer.from(big)))
    app.get('/own', { compress: false }, async (_request, reply) => reply.type('application/json').send(big))
    app.get('/vary', async (_request, reply) => reply.header('vary', 'Origin').type('application/json').send(big))
    app.get('/vary-star', async (_request, reply) => reply.header('vary', '*').type('application/json').send(big))
    app.get('/vary-array', async (_request, reply) => reply.header('vary', ['Origin', 'accept-encoding']).type('application/json').send(big))
    app.get('/empty', async (_request, reply) => reply.code(204).send())
    app.get('/range', async (_request, reply) =>
      reply
        .code(206)
        .header('content-range', `bytes 0-${big.length - 1}/9999`)
        .type('application/json')
        .send(big),
    )
    app.get('/stream', async (_request, reply) => reply.type('application/json').send(Readable.from([big])))
    // 1023 characters, 2046 bytes: the threshold counts bytes.
    app.get('/wide', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('é'.repeat(1023)))
    app.get('/narrow', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('e'.repeat(1023)))
    await app.ready()
  })
  afterAll(() => app.close())

  const get = (url: string, headers: Record<string, string> = { 'accept-encoding': 'br' }) => app.inject({ method: 'GET', url, headers })

  it('never compresses an event stream', async () => {
    const res = await get('/events')
    expect(res.headers['content-encoding']).toBeUndefined()
    expect(res.body).toBe('data: event\n\n'.repeat(200))
  })

  it.each(['/plain', '/yaml', '/svg', '/js', '/problem', '/graphql-response', '/untyped', '/wide'])('compresses %s', async (url) => {
    const identity = await get(url, {})
    const res = await get(url)
    expect(identity.headers['content-encoding']).toBeUndefined()
    expect(res.headers['content-encoding']).toBe('br')
    expect(res.statusCode).toBe(identity.statusCode)
    expect(res.headers['content-type']).toBe(identity.headers['content-type'])
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length)
    expect(brotliDecompressSync(res.rawPayload)).toEqual(identity.rawPayload)
    expect(res.headers.vary).toBe('Accept-Encoding')
  })

  it.each(['/png', '/encoded', '/own', '/range', '/narrow', '/stream'])('leaves %s as it is', async (url) => {
    const identity = await get(url, {})
    const res = await get(url, { 'accept-encoding': 'gzip, br' })
    expect(res.headers['content-encoding']).toBe(identity.headers['content-encoding'])
    expect(res.rawPayload).toEqual(identity.rawPayload)
    expect(res.headers.vary).toBeUndefined()
  })

  it('leaves a 204 and a request with X-No-Compression alone', async () => {
    const empty = await get('/empty')
    expect(empty.statusCode).toBe(204)
    expect(empty.headers['content-encoding']).toBeUndefined()
    const refused = await get('/plain', { 'accept-encoding': 'br', 'x-no-compression': '1' })
    expect(refused.headers['content-encoding']).toBeUndefined()
  })

  it('adds Accept-Encoding to Vary once, after what it names', async () => {
    expect((await get('/vary')).headers.vary).toBe('Origin, Accept-Encoding')
    expect((await get('/vary-star')).headers.vary).toBe('*')
    expect(varyNames((await get('/vary-array')).headers.vary)).toEqual(['origin', 'accept-encoding'])
    for (const url of ['/vary', '/vary-star', '/vary-array']) expect((await get(url)).headers['content-encoding']).toBe('br')
  })

  it('leaves the not-found answers alone, as @fastify/compress did', async () => {
    const res = await get(`/nowhere/${'x'.repeat(2000)}`)
    expect(res.statusCode).toBe(404)
    expect(res.headers['content-encoding']).toBeUndefined()
  })
})
