// The redirect of a path with a trailing slash to the same path without it.
import type { FastifyInstance } from 'fastify'

/**
 * A path with a trailing slash names the same resource without it: redirect there, before
 * routing (the router would match `/users/` as `/users/:id` with an empty id). 301 for reads;
 * 308 for writes, which must keep their method and body.
 */
export function redirectTrailingSlash(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const canonical = withoutTrailingSlash(request.url)
    if (canonical === undefined) return done()
    const status = request.method === 'GET' || request.method === 'HEAD' ? 301 : 308
    reply.code(status).header('location', canonical).send()
  })
}

/**
 * The URL without the trailing slash of its path (the query kept), or undefined when there is
 * none to remove. Only plain paths are redirected: a browser reads "//host" and "/\\host" as
 * another site, so a backslash (raw or %5C) or a leading "//" is never sent back in Location.
 */
function withoutTrailingSlash(url: string): string | undefined {
  const queryAt = url.indexOf('?')
  const pathEnd = queryAt === -1 ? url.length : queryAt
  if (pathEnd <= 1 || url.charCodeAt(pathEnd - 1) !== 47 /* / */) return undefined
  const path = url.slice(0, pathEnd).replace(/\/+$/, '')
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(path) || path.startsWith('//') || /%5c/i.test(path)) return undefined
  return path + url.slice(pathEnd)
}
