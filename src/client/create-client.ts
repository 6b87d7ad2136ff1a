// createClient: Threadline's REST resources, GraphQL and commentAdded-style subscriptions behind
// one typed object. REST goes through openapi-fetch over the generated types, each resource's
// helpers made from its row of the generated table (resource-helpers.ts); every request goes
// through client-fetch.ts (retries on 429/503, the ETag cache). No Node-only imports: it runs in
// browsers and in Node 20 (give Node a WebSocket implementation for subscriptions).
import { type Client as WsClient, createClient as createWsClient } from 'graphql-ws'
import createFetchClient from 'openapi-fetch'
import { createClientFetch } from './client-fetch.js'
import type { GraphQLResult, ResourceName } from './client-types.js'
import type { paths } from './openapi.js'
import { createDocumentHasher, isReadOnly, type PersistedQueryOptions, persistedQueryError } from './persisted-queries.js'
import { createResourceHelpers, type ResourceHelpers, type Send } from './resource-helpers.js'
import { RESOURCES } from './resources.js'
import { ThreadlineError } from './threadline-error.js'

export interface ClientOptions {
  /** Where the service is, e.g. `http://127.0.0.1:3000` (no /api/v1). */
  baseUrl: string
  /** The bearer token sent with every request and as the subscription's connection parameter. */
  token?: string
  /** The REST version to speak; they differ only in how collections page. @default 'v1' */
  version?: 'v1' | 'v2'
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof globalThis.fetch
  /**
   * Retries of a 429 (or a 503 with Retry-After, or a 409 of a write whose first attempt still
   * runs), each after Retry-After seconds, and of a request that got no answer (after 0.25 s, then
   * twice as long each time), before the error is thrown. Writes are retried safely: each goes
   * with an Idempotency-Key of its own, the same on every retry. @default 3
   */
  maxRetries?: number
  /** Called with the error on every 401 (send the user to sign in); the request is not retried. */
  onUnauthorized?: (error: ThreadlineError) => void
  /** Remember each GET's ETag and revalidate with If-None-Match, serving the remembered body on 304. @default false */
  etagCache?: boolean
  /** A WebSocket constructor for subscriptions where there is no global one (Node 20: `ws`). @default globalThis.WebSocket */
  webSocketImpl?: unknown
  /**
   * Automatic persisted queries for `graphql()`: send a document's SHA-256 alone, and the document
   * only when the service does not know the hash yet (it registers it then); `useGETForHashedQueries`
   * sends hashed queries as cacheable GETs. A service with persisted queries off is asked once,
   * then sent documents in full. @default false
   */
  persistedQueries?: boolean | PersistedQueryOptions
}

export type ThreadlineClient = ReturnType<typeof createClient>

export function createClient(options: ClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const version = options.version ?? 'v1'
  let token = options.token
  const fetch = createClientFetch({
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    maxRetries: options.maxRetries ?? 3,
    etagCache: options.etagCache ?? false,
  })

  const api = createFetchClient<paths>({ baseUrl, fetch })
  api.use({
    onRequest({ request }) {
      if (token !== undefined && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${token}`)
      return request
    },
  })

  /** A path of the chosen version: v1 and v2 serve the same operations, so v1's types stand for both. */
  const at = <P extends string>(path: P): P => path.replace('/api/v1/', `/api/${version}/`) as P
  /** openapi-fetch's `request` without its types: the resources' helpers are typed from `paths` themselves (resource-helpers.ts). */
  const untyped = api as unknown as { request(method: string, url: string, init: object): Promise<{ data?: unknown; error?: unknown; response: Response }> }

  function failure(status: number, body: unknown): ThreadlineError {
    const error = ThreadlineError.fromBody(status, body)
    if (status === 401) options.onUnauthorized?.(error)
    return error
  }

  /** The body of a successful answer; a ThreadlineError for any other. */
  async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call
    if (!response.ok) throw failure(response.status, error)
    return data as T
  }

  /** Each resource of the document, by name (RESOURCES, generated): the helpers its paths answer. */
  const send: Send = (method, path, init) => unwrap(untyped.request(method.toUpperCase(), at(path), init))
  // Through unknown: the entries' union is too large for TypeScript to compare with the table's type (TS2590).
  const resources = Object.fromEntries(Object.entries(RESOURCES).map(([name, row]) => [name, createResourceHelpers(row, send)])) as unknown as {
    [R in ResourceName]: ResourceHelpers<R>
  }

  // DELETE /tokens/current is neither a collection nor an item: the table leaves it out, and its helper is written here.
  const tokens = {
    ...resources.tokens,
    /** Signs in (POST /tokens); the client does not start using the token by itself (see setToken). */
    create: resources.tokens.create,
    /** Revokes the token this client sends. */
    revokeCurrent: async (): Promise<void> => {
      await unwrap(api.DELETE(at('/api/v1/tokens/current')))
    },
  }

  const persisted =
    options.persistedQueries === undefined || options.persistedQueries === false ? undefined : options.persistedQueries === true ? {} : options.persistedQueries
  /** Cleared when the service answers PersistedQueryNotSupported: it is not asked again. */
  let sendHashes = persisted !== undefined
  const hashOf = createDocumentHasher()

  async function graphql<TData = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<TData>> {
    const hash = sendHashes ? await hashOf(query) : undefined
    if (hash === undefined) return graphqlRequest<TData>('POST', { query, variables })
    const extensions = { persistedQuery: { version: 1, sha256Hash: hash } }
    const byHash = await graphqlRequest<TData>(persisted?.useGETForHashedQueries === true && isReadOnly(query) ? 'GET' : 'POST', { variables, extensions })
    const refusal = persistedQueryError(byHash)
    if (refusal === undefined) return byHash
    if (refusal === 'NOT_SUPPORTED') sendHashes = false
    // The document with its hash registers it; without the hash once the service said it has none.
    return graphqlRequest<TData>('POST', { query, variables, ...(refusal === 'NOT_FOUND' ? { extensions } : {}) })
  }

  /** One request to /graphql: a GET carries its parameters in the URL (objects as JSON), a POST in its body. */
  async function graphqlRequest<TData>(
    method: 'GET' | 'POST',
    params: { query?: string; variables?: Record<string, unknown> | undefined; extensions?: Record<string, unknown> },
  ): Promise<GraphQLResult<TData>> {
    const headers: Record<string, string> = { Accept: 'application/json' }
    if (token !== undefined) headers.Authorization = `Bearer ${token}`
    let request: Request
    if (method === 'GET') {
      const search = new URLSearchParams()
      for (const [name, value] of Object.entries(params)) {
        if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value))
      }
      request = new Request(`${baseUrl}/graphql?${search}`, { method, headers })
    } else {
      headers['Content-Type'] = 'application/json'
      request = new Request(`${baseUrl}/graphql`, { method, headers, body: JSON.stringify(params) })
    }
    const response = await fetch(request)
    const body: unknown = await response.json().catch(() => undefined)
    // A refused token is the client's business (the hook), whatever the body's shape: under
    // /graphql the refusal comes as `errors` with the same code REST would give.
    if (response.status === 401) throw failure(401, asRestError(body))
    // GraphQL reports its own failures in `errors`; a refusal before execution has the REST error body.
    if (!response.ok && !(typeof body === 'object' && body !== null && 'errors' in body)) throw failure(response.status, body)
    return body as GraphQLResult<TData>
  }

  /** `{errors: [{message, extensions: {code}}]}` as the REST error body, so ThreadlineError reads it alike. */
  function asRestError(body: unknown): unknown {
    const first = (body as { errors?: { message?: unknown; extensions?: { code?: unknown; details?: unknown } }[] } | undefined)?.errors?.[0]
    if (first === undefined) return body
    return { error: { code: first.extensions?.code, message: first.message, details: first.extensions?.details } }
  }

  let ws: WsClient | undefined
  function wsClient(): WsClient {
    ws ??= createWsClient({
      url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: options.webSocketImpl,
      // Read at connection time, so a token set later is used by the next connection.
      connectionParams: () => (token === undefined ? {} : { authorization: `Bearer ${token}` }),
    })
    return ws
  }

  /** Subscribes over graphql-ws (graphql-transport-ws); end the iteration (break, return()) to unsubscribe. */
  function subscribe<TData = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): AsyncIterableIterator<GraphQLResult<TData>> {
    const events = wsClient().iterate({ query, variables }) as AsyncIterableIterator<GraphQLResult<TData>>
    // graphql-ws ends a refused connection with a close event (4401: the token); throw it as the
    // ThreadlineError every other refusal is, calling the 401 hook the same way.
    const typed = async <R>(step: Promise<R>): Promise<R> => {
      try {
        return await step
      } catch (error) {
        throw closeError(error)
      }
    }
    return {
      next: () => typed(events.next()),
      return: (value?: unknown) => typed(events.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined })),
      throw: (error?: unknown) => typed(events.throw?.(error) ?? Promise.reject(error instanceof Error ? error : new Error(String(error)))),
      [Symbol.asyncIterator]() {
        return this
      },
    }
  }

  /** A WebSocket close (graphql-ws rejects with the CloseEvent) as a ThreadlineError; anything else as it is. */
  function closeError(error: unknown): unknown {
    const close = error as { code?: unknown; reason?: unknown } | null
    if (typeof close?.code !== 'number' || !('reason' in close)) return error
    const reason = typeof close.reason === 'string' && close.reason !== '' ? close.reason : `The subscription connection closed (${close.code})`
    if (close.code === 4401) return failure(401, { error: { code: 'UNAUTHENTICATED', message: reason } })
    if (close.code === 4403) return failure(403, { error: { code: 'FORBIDDEN', message: reason } })
    return new ThreadlineError(0, `WS_CLOSE_${close.code}`, reason)
  }

  return {
    ...resources,
    tokens,
    graphql,
    subscribe,
    /** Changes the token sent from now on (undefined: none). */
    setToken(next: string | undefined): void {
      token = next
    },
    /** Closes the subscription connection, if one was opened. */
    async close(): Promise<void> {
      await ws?.dispose()
      ws = undefined
    },
  }
}
