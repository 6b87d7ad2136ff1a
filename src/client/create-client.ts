// createClient: Threadline's REST resources, GraphQL and commentAdded-style subscriptions behind
// one typed object. REST goes through openapi-fetch over the generated types; every request goes
// through client-fetch.ts (retries on 429/503, the ETag cache). No Node-only imports: it runs in
// browsers and in Node 20 (give Node a WebSocket implementation for subscriptions).
import { type Client as WsClient, createClient as createWsClient } from 'graphql-ws'
import createFetchClient from 'openapi-fetch'
import { createClientFetch } from './client-fetch.js'
import type {
  Comment,
  CommentChanges,
  CommentsQuery,
  Credentials,
  Embeds,
  GraphQLResult,
  IssuedToken,
  NewComment,
  NewPost,
  NewTodo,
  NewUser,
  Page,
  Post,
  PostChanges,
  PostReplacement,
  PostsQuery,
  Representation,
  Shaped,
  Todo,
  TodoChanges,
  TodosQuery,
  User,
  UserChanges,
  UserReplacement,
  UsersQuery,
} from './client-types.js'
import type { paths } from './openapi.js'
import { createDocumentHasher, isReadOnly, type PersistedQueryOptions, persistedQueryError } from './persisted-queries.js'
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

/** Without page and cursor: all() follows nextCursor itself. */
type AllQuery<Q> = Omit<Q, 'page' | 'cursor'>
type Id = number | string

type V1Path = keyof paths

/** `select`, `include` and limits for a resource R (a key of Embeds) whose items are T. */
type ShapeOf<T, R extends keyof Embeds, S extends keyof T, I extends keyof Embeds[R]> = Representation<T, Embeds[R], S, I>
/** Its items as they come back. */
type ShapedAs<T, R extends keyof Embeds, S extends keyof T, I extends keyof Embeds[R]> = Shaped<T, Embeds[R], S, I>

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
  const at = <P extends V1Path>(path: P): P => path.replace('/api/v1/', `/api/${version}/`) as P

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

  /** unwrap, the items typed as the query's `select` and `include` shape them (the document has every field but id optional). */
  const unwrapShaped = <T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> => unwrap(call) as Promise<T>

  /** A single GET's parameters with its `select` and `include` (the document describes them on that route). */
  const withQuery = <P>(path: P, query: object): { path: P } => {
    const params = { path, query }
    return params
  }

  async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined
    do {
      const page = await fetchPage(cursor)
      yield* page.data
      cursor = page.meta.pagination.nextCursor ?? undefined
    } while (cursor !== undefined)
  }

  const path = (...ids: Id[]) => ids.map(String)

  const users = {
    list: <S extends keyof User = never, I extends keyof Embeds['users'] = never>(
      query: UsersQuery & ShapeOf<User, 'users', S, I> = {},
    ): Promise<Page<ShapedAs<User, 'users', S, I>>> => unwrapShaped(api.GET(at('/api/v1/users'), { params: { query } })),
    all: <S extends keyof User = never, I extends keyof Embeds['users'] = never>(
      query: AllQuery<UsersQuery> & ShapeOf<User, 'users', S, I> = {},
    ): AsyncGenerator<ShapedAs<User, 'users', S, I>, void, undefined> => paginate((cursor) => users.list<S, I>({ ...query, cursor })),
    get: async <S extends keyof User = never, I extends keyof Embeds['users'] = never>(
      id: Id,
      query: ShapeOf<User, 'users', S, I> = {},
    ): Promise<ShapedAs<User, 'users', S, I>> =>
      (await unwrapShaped<{ data: ShapedAs<User, 'users', S, I> }>(api.GET(at('/api/v1/users/{id}'), { params: withQuery({ id: String(id) }, query) }))).data,
    create: async (body: NewUser): Promise<User> => (await unwrap(api.POST(at('/api/v1/users'), { body }))).data,
    replace: async (id: Id, body: UserReplacement): Promise<User> =>
      (await unwrap(api.PUT(at('/api/v1/users/{id}'), { params: { path: { id: String(id) } }, body }))).data,
    update: async (id: Id, body: UserChanges): Promise<User> =>
      (await unwrap(api.PATCH(at('/api/v1/users/{id}'), { params: { path: { id: String(id) } }, body }))).data,
    remove: async (id: Id): Promise<void> => {
      await unwrap(api.DELETE(at('/api/v1/users/{id}'), { params: { path: { id: String(id) } } }))
    },
  }

  const posts = {
    list: <S extends keyof Post = never, I extends keyof Embeds['posts'] = never>(
      userId: Id,
      query: PostsQuery & ShapeOf<Post, 'posts', S, I> = {},
    ): Promise<Page<ShapedAs<Post, 'posts', S, I>>> =>
      unwrapShaped(api.GET(at('/api/v1/users/{userId}/posts'), { params: { path: { userId: String(userId) }, query } })),
    all: <S extends keyof Post = never, I extends keyof Embeds['posts'] = never>(
      userId: Id,
      query: AllQuery<PostsQuery> & ShapeOf<Post, 'posts', S, I> = {},
    ): AsyncGenerator<ShapedAs<Post, 'posts', S, I>, void, undefined> => paginate((cursor) => posts.list<S, I>(userId, { ...query, cursor })),
    get: async <S extends keyof Post = never, I extends keyof Embeds['posts'] = never>(
      userId: Id,
      postId: Id,
      query: ShapeOf<Post, 'posts', S, I> = {},
    ): Promise<ShapedAs<Post, 'posts', S, I>> => {
      const [u, p] = path(userId, postId) as [string, string]
      const route = at('/api/v1/users/{userId}/posts/{postId}')
      return (await unwrapShaped<{ data: ShapedAs<Post, 'posts', S, I> }>(api.GET(route, { params: withQuery({ userId: u, postId: p }, query) }))).data
    },
    create: async (userId: Id, body: NewPost): Promise<Post> =>
      (await unwrap(api.POST(at('/api/v1/users/{userId}/posts'), { params: { path: { userId: String(userId) } }, body }))).data,
    replace: async (userId: Id, postId: Id, body: PostReplacement): Promise<Post> => {
      const [u, p] = path(userId, postId) as [string, string]
      return (await unwrap(api.PUT(at('/api/v1/users/{userId}/posts/{postId}'), { params: { path: { userId: u, postId: p } }, body }))).data
    },
    update: async (userId: Id, postId: Id, body: PostChanges): Promise<Post> => {
      const [u, p] = path(userId, postId) as [string, string]
      return (await unwrap(api.PATCH(at('/api/v1/users/{userId}/posts/{postId}'), { params: { path: { userId: u, postId: p } }, body }))).data
    },
    remove: async (userId: Id, postId: Id): Promise<void> => {
      const [u, p] = path(userId, postId) as [string, string]
      await unwrap(api.DELETE(at('/api/v1/users/{userId}/posts/{postId}'), { params: { path: { userId: u, postId: p } } }))
    },
  }

  const comments = {
    list: <S extends keyof Comment = never, I extends keyof Embeds['comments'] = never>(
      userId: Id,
      postId: Id,
      query: CommentsQuery & ShapeOf<Comment, 'comments', S, I> = {},
    ): Promise<Page<ShapedAs<Comment, 'comments', S, I>>> => {
      const [u, p] = path(userId, postId) as [string, string]
      return unwrapShaped(api.GET(at('/api/v1/users/{userId}/posts/{postId}/comments'), { params: { path: { userId: u, postId: p }, query } }))
    },
    all: <S extends keyof Comment = never, I extends keyof Embeds['comments'] = never>(
      userId: Id,
      postId: Id,
      query: AllQuery<CommentsQuery> & ShapeOf<Comment, 'comments', S, I> = {},
    ): AsyncGenerator<ShapedAs<Comment, 'comments', S, I>, void, undefined> => paginate((cursor) => comments.list<S, I>(userId, postId, { ...query, cursor })),
    get: async <S extends keyof Comment = never, I extends keyof Embeds['comments'] = never>(
      userId: Id,
      postId: Id,
      commentId: Id,
      query: ShapeOf<Comment, 'comments', S, I> = {},
    ): Promise<ShapedAs<Comment, 'comments', S, I>> => {
      const [u, p, c] = path(userId, postId, commentId) as [string, string, string]
      const route = at('/api/v1/users/{userId}/posts/{postId}/comments/{commentId}')
      const params = withQuery({ userId: u, postId: p, commentId: c }, query)
      return (await unwrapShaped<{ data: ShapedAs<Comment, 'comments', S, I> }>(api.GET(route, { params }))).data
    },
    create: async (userId: Id, postId: Id, body: NewComment): Promise<Comment> => {
      const [u, p] = path(userId, postId) as [string, string]
      return (await unwrap(api.POST(at('/api/v1/users/{userId}/posts/{postId}/comments'), { params: { path: { userId: u, postId: p } }, body }))).data
    },
    update: async (userId: Id, postId: Id, commentId: Id, body: CommentChanges): Promise<Comment> => {
      const [u, p, c] = path(userId, postId, commentId) as [string, string, string]
      const route = at('/api/v1/users/{userId}/posts/{postId}/comments/{commentId}')
      return (await unwrap(api.PATCH(route, { params: { path: { userId: u, postId: p, commentId: c } }, body }))).data
    },
    remove: async (userId: Id, postId: Id, commentId: Id): Promise<void> => {
      const [u, p, c] = path(userId, postId, commentId) as [string, string, string]
      await unwrap(api.DELETE(at('/api/v1/users/{userId}/posts/{postId}/comments/{commentId}'), { params: { path: { userId: u, postId: p, commentId: c } } }))
    },
  }

  const todos = {
    list: <S extends keyof Todo = never>(
      userId: Id,
      query: TodosQuery & ShapeOf<Todo, 'todos', S, never> = {},
    ): Promise<Page<ShapedAs<Todo, 'todos', S, never>>> =>
      unwrapShaped(api.GET(at('/api/v1/users/{userId}/todos'), { params: { path: { userId: String(userId) }, query } })),
    all: <S extends keyof Todo = never>(
      userId: Id,
      query: AllQuery<TodosQuery> & ShapeOf<Todo, 'todos', S, never> = {},
    ): AsyncGenerator<ShapedAs<Todo, 'todos', S, never>, void, undefined> => paginate((cursor) => todos.list<S>(userId, { ...query, cursor })),
    get: async <S extends keyof Todo = never>(
      userId: Id,
      todoId: Id,
      query: ShapeOf<Todo, 'todos', S, never> = {},
    ): Promise<ShapedAs<Todo, 'todos', S, never>> => {
      const [u, t] = path(userId, todoId) as [string, string]
      const route = at('/api/v1/users/{userId}/todos/{todoId}')
      return (await unwrapShaped<{ data: ShapedAs<Todo, 'todos', S, never> }>(api.GET(route, { params: withQuery({ userId: u, todoId: t }, query) }))).data
    },
    create: async (userId: Id, body: NewTodo): Promise<Todo> =>
      (await unwrap(api.POST(at('/api/v1/users/{userId}/todos'), { params: { path: { userId: String(userId) } }, body }))).data,
    update: async (userId: Id, todoId: Id, body: TodoChanges): Promise<Todo> => {
      const [u, t] = path(userId, todoId) as [string, string]
      return (await unwrap(api.PATCH(at('/api/v1/users/{userId}/todos/{todoId}'), { params: { path: { userId: u, todoId: t } }, body }))).data
    },
    remove: async (userId: Id, todoId: Id): Promise<void> => {
      const [u, t] = path(userId, todoId) as [string, string]
      await unwrap(api.DELETE(at('/api/v1/users/{userId}/todos/{todoId}'), { params: { path: { userId: u, todoId: t } } }))
    },
  }

  const tokens = {
    /** Signs in; the client does not start using the token by itself (see setToken). */
    create: async (credentials: Credentials): Promise<IssuedToken> => (await unwrap(api.POST(at('/api/v1/tokens'), { body: credentials }))).data,
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
    users,
    posts,
    comments,
    todos,
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
