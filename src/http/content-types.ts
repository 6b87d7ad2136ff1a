// Bodies are JSON and nothing else. Fastify also parses text/plain by default: that is what a
// cross-site form can send without a preflight, so it is refused (415) like every other type.
import type { FastifyBodyParser, FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

export const MAX_BODY_BYTES = 1024 * 1024

export function registerContentTypes(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain')
  // JSON is UTF-8 (RFC 8259 §8.1): a body declared in another charset, or compressed, would be
  // misread, so it is refused before it is read.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase()
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return done(new AppError('UNSUPPORTED_MEDIA_TYPE', `Send the body as UTF-8 JSON, not ${charset}`))
    }
    const encoding = request.headers['content-encoding']?.trim().toLowerCase()
    if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
      return done(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body uncompressed (no Content-Encoding)'))
    }
    done(null, payload)
  })
  // Bodies are decoded strictly: Node would turn bytes that are not UTF-8 into U+FFFD and the text
  // would be stored changed, so such a body is refused. RFC 7396: what PATCH does here is a JSON
  // merge patch, so its media type is welcome too.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  const parseUtf8Json: FastifyBodyParser<Buffer> = (request, body, done) => {
    let text: string
    try {
      text = strictUtf8.decode(body)
    } catch {
      done(new AppError('BAD_REQUEST', 'The request body is not valid UTF-8'), undefined)
      return
    }
    // Fastify's own parser, callback style: it answers through done.
    void parseJson(request, text, done)
  }
  app.removeContentTypeParser('application/json')
  for (const type of ['application/json', 'application/merge-patch+json']) {
    app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, parseUtf8Json)
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
