// Runs once, on SQLite: routeConfigOf (src/core/route-config-read.ts) on a bare Fastify app; no store is involved.
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keepRouteConfig, routeConfigOf } from '../../src/core/route-config-read.js'

describe('routeConfigOf', () => {
  const app = Fastify()
  const seen: { hook?: unknown; handler?: unknown; notFound?: unknown; same?: boolean } = {}
  beforeAll(async () => {
    keepRouteConfig(app)
    app.addHook('onRequest', (request, _reply, done) => {
      seen.hook = routeConfigOf(request).url
      done()
    })
    app.get('/kept', { config: { quietLog: true } }, async (request) => {
      seen.same = routeConfigOf(request) === routeConfigOf(request)
      return { url: routeConfigOf(request).url, quietLog: routeConfigOf(request).quietLog }
    })
    // A route that hands the request on to the not-found handler.
    app.get('/handed-on', async (request, reply) => {
      seen.handler = routeConfigOf(request).url
      reply.callNotFound()
      return reply
    })
    app.setNotFoundHandler(async (request, reply) => {
      seen.notFound = routeConfigOf(request).url ?? null
      return reply.code(404).send({ notFound: true })
    })
    await app.ready()
  })
  afterAll(() => app.close())

  it("gives the matched route's config, the same object on every read", async () => {
    const res = await app.inject({ url: '/kept' })
    expect(res.json()).toEqual({ url: '/kept', quietLog: true })
    expect(seen.hook).toBe('/kept')
    expect(seen.same).toBe(true)
  })

  it("gives the not-found route's once a route hands the request on to it", async () => {
    const res = await app.inject({ url: '/handed-on' })
    expect(res.statusCode).toBe(404)
    expect(seen.handler).toBe('/handed-on')
    expect(seen.notFound).toBeNull()
  })
})
