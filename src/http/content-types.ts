// Bodies are JSON and nothing else. Fastify also parses text/plain by default: that is what a
// cross-site form can send without a preflight, so it is refused (415) like every other type.
import type { FastifyInstance } from 'fastify'

export const MAX_BODY_BYTES = 1024 * 1024

export function registerContentTypes(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain')
  // RFC 7396: what PATCH does here is a JSON merge patch, so its media type is welcome too.
  app.addContentTypeParser(
    'application/merge-patch+json',
    { parseAs: 'string', bodyLimit: MAX_BODY_BYTES },
    app.getDefaultJsonParser('error', 'error'),
  )
}
