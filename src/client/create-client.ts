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
  Todo,
  TodoChanges,
  TodosQuery,
  User,
  UserChanges,
  UserReplacement,
  UsersQuery,
} from './client-types.js'
import type { paths } from './openapi.js'
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
  /** Retries of a 429 (or a 503 with Retry-After), each after Retry-After seconds, before the error is thrown. @default 3 */
  maxRetries?: number
  /** Called with the error on every 401 (send the user to sign in); the request is not retried. */
  onUnauthorized?: (error: ThreadlineError) => void
  /** Remember each GET's ETag and revalidate with If-None-Match, serving the remembered body on 304. @default false */
  etagCache?: boolean
  /** A WebSocket constructor for subscriptions where there is no global one (Node 20: `ws`). @default globalThis.WebSocket */
  webSocketImpl?: unknown
}

/** Without page and cursor: all() follows nextCursor itself. */
type AllQuery<Q> = Omit<Q, 'page' | 'cursor'>
type Id = number | string

type V1Path = keyof paths

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
    list: (query: UsersQuery = {}): Promise<Page<User>> => unwrap(api.GET(at('/api/v1/users'), { params: { query } })),
    all: (query: AllQuery<UsersQuery> = {}): AsyncGenerator<User, void, undefined> => paginate((cursor) => users.list({ ...query, cursor })),
    get: async (id: Id): Promise<User> => (await unwrap(api.GET(at('/api/v1/users/{id}'), { params: { path: { id: String(id) } } }))).data,
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
    list: (userId: Id, query: PostsQuery = {}): Promise<Page<Post>> =>
      unwrap(api.GET(at('/api/v1/users/{userId}/posts'), { params: { path: { userId: String(userId) }, query } })),
    all: (userId: Id, query: AllQuery<PostsQuery> = {}): AsyncGenerator<Post, void, undefined> =>
      paginate((cursor) => posts.list(userId, { ...query, cursor })),
    get: async (userId: Id, postId: Id): Promise<Post> => {
      const [u, p] = path(userId, postId) as [string, string]
      return (await unwrap(api.GET(at('/api/v1/users/{userId}/posts/{postId}'), { params: { path: { userId: u, postId: p } } }))).data
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
    list: (userId: Id, postId: Id, query: CommentsQuery = {}): Promise<Page<Comment>> => {
      const [u, p] = path(userId, postId) as [string, string]
      return unwrap(api.GET(at('/api/v1/users/{userId}/posts/{postId}/comments'), { params: { path: { userId: u, postId: p }, query } }))
    },
    all: (userId: Id, postId: Id, query: AllQuery<CommentsQuery> = {}): AsyncGenerator<Comment, void, undefined> =>
      paginate((cursor) => comments.list(userId, postId, { ...query, cursor })),
    get: async (userId: Id, postId: Id, commentId: Id): Promise<Comment> => {
      const [u, p, c] = path(userId, postId, commentId) as [string, string, string]
      const route = at('/api/v1/users/{userId}/posts/{postId}/comments/{commentId}')
      return (await unwrap(api.GET(route, { params: { path: { userId: u, postId: p, commentId: c } } }))).data
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
    list: (userId: Id, query: TodosQuery = {}): Promise<Page<Todo>> =>
      unwrap(api.GET(at('/api/v1/users/{userId}/todos'), { params: { path: { userId: String(userId) }, query } })),
    all: (userId: Id, query: AllQuery<TodosQuery> = {}): AsyncGenerator<Todo, void, undefined> =>
      paginate((cursor) => todos.list(userId, { ...query, cursor })),
    get: async (userId: Id, todoId: Id): Promise<Todo> => {
      const [u, t] = path(userId, todoId) as [string, string]
      return (await unwrap(api.GET(at('/api/v1/users/{userId}/todos/{todoId}'), { params: { path: { userId: u, todoId: t } } }))).data
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

  async function graphql<TData = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<TData>> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' }
    if (token !== undefined) headers.Authorization = `Bearer ${token}`
    const response = await fetch(new Request(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) }))
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
