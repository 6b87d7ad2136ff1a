// A fetch that records what a GraphQL client sent and what came back, around the real one: a spy
// on the client's own transport, for the persisted-query tests (our client's and Apollo's link).
import { createHash } from 'node:crypto'

export interface Exchange {
  method: string
  url: URL
  body: { query?: string; extensions?: { persistedQuery?: { sha256Hash?: string } } } | undefined
  ifNoneMatch: string | null
  status: number
  etag: string | null
}

export function recordingFetch() {
  const exchanges: Exchange[] = []
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init)
    const text = request.method === 'POST' ? await request.clone().text() : undefined
    const response = await globalThis.fetch(request)
    exchanges.push({
      method: request.method,
      url: new URL(request.url),
      body: text === undefined ? undefined : JSON.parse(text),
      ifNoneMatch: request.headers.get('If-None-Match'),
      status: response.status,
      etag: response.headers.get('ETag'),
    })
    return response
  }
  return { fetch, exchanges }
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** The hash a request named, from a POST's body or a GET's query string. */
export const hashSent = (exchange: Exchange) =>
  exchange.body?.extensions?.persistedQuery?.sha256Hash ??
  (JSON.parse(exchange.url.searchParams.get('extensions') ?? '{}') as { persistedQuery?: { sha256Hash?: string } }).persistedQuery?.sha256Hash

/** The document a request carried, if any. */
export const querySent = (exchange: Exchange) => exchange.body?.query ?? exchange.url.searchParams.get('query') ?? undefined
