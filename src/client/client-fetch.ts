// The fetch the client's requests go through (openapi-fetch's and the GraphQL POSTs): it applies
// the client rules docs/client.md gives on 429 and 503 (wait Retry-After, retry a
// bounded number of times) and, when asked, keeps an ETag cache that revalidates GETs with
// If-None-Match. Every write goes with an Idempotency-Key of its own, the same on each of its
// retries: a retry can never make a second write. So a write whose answer was lost (the connection
// dropped, a 409 while the first attempt still ran) is retried too, as reads are.

export interface ClientFetchOptions {
  fetch: typeof globalThis.fetch
  /** Retries of a 429, a 503 with Retry-After, a 409 of a write still running, or a request without an answer, before the answer (or the failure) is surfaced. @default 3 */
  maxRetries: number
  /** Remember each GET's ETag and body; revalidate with If-None-Match, serve the body on 304. @default false */
  etagCache: boolean
  /** How the client waits (tests may shorten it). @default setTimeout */
  sleep?: (ms: number) => Promise<void>
  /** Makes the Idempotency-Key of a write. @default crypto.randomUUID */
  newIdempotencyKey?: () => string
}

/** The methods that change something: each request gets an Idempotency-Key. */
const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** The first wait after a request that got no answer at all; doubled at each retry. */
const NO_ANSWER_WAIT_MS = 250

interface CachedAnswer {
  etag: string
  body: ArrayBuffer
  headers: [string, string][]
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000))
}

export function createClientFetch(options: ClientFetchOptions): (request: Request) => Promise<Response> {
  const sleep = options.sleep ?? defaultSleep
  // Keyed by URL and credentials: an answer to one caller is not served to another.
  const cache = new Map<string, CachedAnswer>()

  const newKey = options.newIdempotencyKey ?? (() => globalThis.crypto.randomUUID())

  async function withRetries(request: Request): Promise<Response> {
    if (WRITE_METHODS.has(request.method) && !request.headers.has('Idempotency-Key')) request.headers.set('Idempotency-Key', newKey())
    // A read, or a write the server tells apart from its retries: sent again, it does nothing twice.
    const repeatable = !WRITE_METHODS.has(request.method) || request.headers.has('Idempotency-Key')
    for (let attempt = 0; ; attempt++) {
      // Each attempt sends a copy: a body can be read only once.
      let response: Response
      try {
        response = await options.fetch(request.clone())
      } catch (error) {
        // No answer (the connection refused or dropped): the request may or may not have arrived.
        if (!repeatable || attempt >= options.maxRetries || request.signal.aborted) throw error
        await sleep(NO_ANSWER_WAIT_MS * 2 ** attempt)
        continue
      }
      const retryAfter = parseRetryAfter(response.headers.get('Retry-After'))
      const stillRunning = response.status === 409 && retryAfter !== undefined && request.headers.has('Idempotency-Key')
      const retryable = response.status === 429 || (response.status === 503 && retryAfter !== undefined) || stillRunning
      if (!retryable || attempt >= options.maxRetries) return response
      await response.body?.cancel()
      await sleep((retryAfter ?? 1) * 1000)
    }
  }

  return async (request) => {
    if (!options.etagCache || request.method !== 'GET') return withRetries(request)
    const key = `${request.headers.get('Authorization') ?? ''} ${request.url}`
    const cached = cache.get(key)
    if (cached !== undefined && !request.headers.has('If-None-Match')) request.headers.set('If-None-Match', cached.etag)
    const response = await withRetries(request)
    if (response.status === 304 && cached !== undefined) {
      return new Response(cached.body.slice(0), { status: 200, headers: cached.headers })
    }
    const etag = response.headers.get('ETag')
    if (response.status === 200 && etag !== null) {
      const body = await response.arrayBuffer()
      // The body is already decoded: its encoding and length no longer describe it.
      const headers: [string, string][] = []
      response.headers.forEach((value, name) => {
        if (name !== 'content-encoding' && name !== 'content-length') headers.push([name, value])
      })
      cache.set(key, { etag, body, headers })
      return new Response(body.slice(0), { status: 200, headers })
    }
    return response
  }
}
